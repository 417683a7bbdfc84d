/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowfile: ovs-ofctl flow syntax <-> struct sl_flow_spec, and startup flow files.
 *
 * This is control-path code only.  It turns the text an operator writes
 * (ovs-ofctl(8) "Flow Syntax", OpenFlow 1.3 subset) into the host-order specs
 * the pipeline consumes (pipeline.h), prints a spec back as canonical text
 * (dump-flows), and loads a startup file of table declarations and flows.  It
 * has no DPDK dependency and keeps no state: every function may be called
 * from any thread, on its own arguments.
 *
 * ----------------------------------------------------------------------------
 * Flow syntax (sl_flow_parse)
 * ----------------------------------------------------------------------------
 *
 *   [key[=value]]... actions=ACTION[,ACTION]...
 *
 * Items are separated by commas and/or white space; "actions=" must be the
 * last item and takes the rest of the line.  Parentheses nest: the commas of
 * "raw(l4,0,16)" or "write_actions(a,b)" do not separate items.  Keys and
 * action names are case-sensitive; reserved port names (LOCAL, ...) are not.
 *
 * Flow-entry keys:
 *   table=N            0..253 (default 0)
 *   priority=N         0..65535 (default 32768)
 *   cookie=V[/MASK]    64-bit; the mask only filters modify/delete; MASK -1
 *                      means all ones (as ovs-ofctl writes it)
 *   idle_timeout=N     seconds, 0..65535 (default 0: none)
 *   hard_timeout=N     seconds, 0..65535
 *   send_flow_rem check_overlap reset_counts no_packet_counts no_byte_counts
 *   low_latency (Sluice: the entry serves low-latency flows; docs/ffp.md)
 *                      flow-mod flags (SL_FF_*), no value
 *
 * Shorthands (each adds its prerequisites to the match):
 *   ip ipv6 arp rarp mpls mplsm         dl_type 0x0800 0x86dd 0x0806 0x8035
 *                                       0x8847 0x8848
 *   tcp udp sctp icmp                   dl_type=0x0800 plus nw_proto 6 17 132 1
 *   tcp6 udp6 sctp6 icmp6               dl_type=0x86dd plus nw_proto 6 17 132 58
 *
 * Match fields: every name of pkt.h's SL_FOREACH_FIELD, and the aliases
 * sl_field_by_name() accepts (eth_src, eth_dst, eth_type, vlan_pcp, ip_proto,
 * ipv4_src, ipv4_dst, ...).  Constraining a field twice is accepted when
 * both constraints are identical (so "ip,dl_type=0x0800" is fine) and is an
 * error when they differ ("ip,ipv6").  Values, by field:
 *   in_port                 1..0xffffff00, or LOCAL, CONTROLLER; no mask
 *   dl_src dl_dst arp_sha   MAC "aa:bb:cc:dd:ee:ff[/ff:ff:ff:00:00:00]"
 *     arp_tha
 *   nw_src nw_dst arp_spa   IPv4 "a.b.c.d[/LEN]" or "a.b.c.d/m.m.m.m"
 *     arp_tpa
 *   ipv6_src ipv6_dst       IPv6 "ADDR[/LEN]" or "ADDR/MASKADDR" (inet_pton)
 *     nd_target
 *   dl_vlan                 ovs-ofctl meaning: dl_vlan=N (0..4095) matches a
 *                           tag with VID N (stored as OpenFlow vlan_vid
 *                           0x1000|N, mask 0x1fff); dl_vlan=0xffff matches
 *                           untagged frames (vlan_vid 0, mask 0x1fff).  Not
 *                           maskable: use vlan_vid for masks.
 *   vlan_vid                OpenFlow 1.3 OXM meaning, raw 13-bit value with
 *                           the OFPVID_PRESENT bit: vlan_vid=0x1000/0x1000
 *                           matches any tagged frame, vlan_vid=0x100a is
 *                           dl_vlan=10.  Maskable.
 *   vlan_tci                ovs-ofctl's 16-bit TCI[/MASK], 0x1000 meaning "a
 *                           tag is present" (vlan_tci=0: untagged): becomes
 *                           vlan_vid (the low 13 bits, masked) and an exact
 *                           dl_vlan_pcp (the top 3 bits, all or none of them
 *                           in the mask, only with the present bit set)
 *   tp_src tp_dst           resolve to tcp_/udp_/sctp_ by the nw_proto already
 *                           in the match (so "tcp,tp_dst=80" works and
 *                           "tp_dst=80,tcp" does not); error when there is none
 *   raw(BASE,OFF,N)         protocol-oblivious field: BASE pkt|l3|l4, bit
 *                           offset OFF 0..65535, N bits 1..128; the value is a
 *                           number (hex for more than 64 bits) right-aligned
 *                           big-endian in ceil(N/8) bytes:
 *                           "raw(l4,0,16)=0x1234/0xff00"
 *   everything else         integer, decimal or 0x hex (no octal, no sign),
 *                           optional /MASK.  Masks are accepted on metadata,
 *                           MACs, IP addresses, vlan_vid, transport ports,
 *                           ipv6_label and raw fields (as ovs-ofctl); the
 *                           others (in_port, dl_type, nw_proto, dl_vlan_pcp,
 *                           ip_dscp, nw_ecn, icmp types/codes, arp_op, mpls_*,
 *                           nw_ttl) reject a mask.
 * A value or mask wider than the field is an error, never truncated.  Value
 * bits outside the mask are cleared (ovs-ofctl does the same).  A field with
 * an all-zero mask ("nw_dst=0.0.0.0/0") is a wildcard and adds nothing.
 * After parsing, OpenFlow prerequisites are checked (sl_field_prereq, then
 * sl_match_prereq_check): "tcp_dst=80" alone fails with "tcp_dst requires
 * tcp".
 *
 * Actions (comma separated; ':' or '=' separates an action from its argument):
 *   output:P  P            output to port P (1..0xffffff00 or a reserved name)
 *   IN_PORT ALL FLOOD LOCAL NORMAL
 *                          output to that reserved port; NORMAL is accepted
 *                          (SL_PORT_NORMAL) for the pipeline to judge
 *   CONTROLLER[:MAXLEN]    output to the controller; MAXLEN 0..65535, default
 *                          65535 (OFPCML_NO_BUFFER, whole packet)
 *   output:TABLE           packet-out only; accepted for round trips
 *   drop                   no action; only as the whole action list
 *   set_field:V->F         write field F (set_field-writable or raw) with V
 *                          in F's value syntax; no mask.  F's prerequisites
 *                          must hold for the packet as the actions written
 *                          before it leave it: the match ("set_field:80->
 *                          tcp_dst" needs tcp or tcp6), changed by push_mpls
 *                          (MPLS), pop_mpls (its ethertype), push_pbb, pop_pbb
 *                          (unknown), as Open vSwitch checks it; write_actions
 *                          in the order written.  V->dl_vlan stores 0x1000|V,
 *                          V->vlan_vid stores V as given.
 *   mod_vlan_vid:V         set_field 0x1000|V -> vlan_vid (V 0..4095).  Like
 *                          any OpenFlow 1.3 set_field it leaves an untagged
 *                          frame untouched: it does not push a tag.
 *   mod_dl_src:MAC mod_dl_dst:MAC mod_nw_src:IP mod_nw_dst:IP
 *                          set_field on dl_src, dl_dst, nw_src, nw_dst
 *   mod_tp_src:N mod_tp_dst:N
 *                          set_field on tcp_, udp_ or sctp_ src/dst, chosen by
 *                          the match's nw_proto (error when it has none)
 *   push_vlan:0x8100|0x88a8  pop_vlan  strip_vlan (= pop_vlan)
 *   dec_ttl  mod_nw_ttl:N (also set_nw_ttl:N, set_ttl:N)  copy_ttl_out
 *                          (dec_ttl needs no ip match, unlike in ovs-ofctl:
 *                          OpenFlow 1.3 gives it no prerequisite, and a
 *                          packet that is not IP passes it unchanged)
 *   copy_ttl_in  group:N (0..0xffffff00)  set_queue:N
 *   push_mpls:0x8847|0x8848  pop_mpls:ETHERTYPE (what follows the label)
 *   set_mpls_ttl:N  dec_mpls_ttl
 *                          MPLS: push after the VLAN tags (label, TC and TTL
 *                          copied from a label below, else label 0/2, TC
 *                          from the DSCP, TTL from IP or 64); a packet
 *                          without a label passes pop/set/dec unchanged
 *   push_pbb:0x88e7  pop_pbb
 *                          PBB (802.1ah): push puts the frame behind a new
 *                          header with the same MACs, type 0x88e7 and an
 *                          I-TAG (I-SID 0 or copied, I-PCP from the VLAN
 *                          PCP); pop removes the outer header through the
 *                          I-TAG.  Match and set the I-SID as pbb_isid
 *   meter:N                the meter instruction (1..0xffff0000): the packet
 *                          goes through meter N before anything else; it
 *                          must be written first, as ovs-ofctl requires
 *   set_state:S  set_state(S[,table=T][,idle_ms=MS][,hard_ms=MS][,rollback=R])
 *                          OpenState (pipeline.h "Stateful stages"): set the
 *                          state of the packet's update-scope flow in state
 *                          table T (default: the one the packet last passed);
 *                          an apply action only
 * Instructions (after all plain actions, each at most once, any order):
 *   write_actions(A,...)   action set; one action per type (one per field for
 *                          set_field), at most SL_ACTIONS_MAX; the set runs
 *                          in the order of OpenFlow 1.3 section 5.10 (push
 *                          before set_field), whatever the written order,
 *                          so "write_actions(set_field:5->vlan_vid,
 *                          push_vlan:0x8100)" is accepted (ovs-ofctl refuses
 *                          it, reading the list in order);
 *                          "write_actions()" is an empty action set
 *   clear_actions
 *   write_metadata:V[/M]   64-bit, mask default all ones
 *   goto_table:N           N must be greater than the flow's table
 * Plain actions form the apply_actions instruction, in order, at most
 * SL_ACTIONS_MAX.  "actions=" and "actions=drop" mean no instruction at all:
 * a matching packet is dropped.  An empty apply_actions instruction therefore
 * reads back as no instruction (has_apply false).
 *
 * ----------------------------------------------------------------------------
 * Table declarations (Sluice extension; sl_table_spec_parse)
 * ----------------------------------------------------------------------------
 *
 *   table=N,kind=KIND[,fields=F1+F2+...][,size=N][,name=NAME]
 *
 * KIND is any name sl_table_kind_parse() accepts (direct, exact, lpm, mask,
 * ternary, ...).  Fields are '+'-separated (',' already separates keys) match
 * field names or raw(BASE,OFF,N); dl_vlan and vlan_vid are the same field;
 * tp_src/tp_dst are ambiguous and rejected.  Omitting fields lets the
 * pipeline derive them from the table's first flows.  size is the capacity
 * (1..2^32-1; omitted: the pipeline's default).  NAME is at most 31
 * characters of [A-Za-z0-9_.-].  Whether a kind suits its fields (lpm takes
 * one field, ...) is the pipeline's call (sl_pipeline_table_declare).
 *
 *   table=N,kind=state,lookup=F1+F2...[,update=G1+G2...][,size=N][,name=NAME]
 *
 * declares an OpenState state table: "lookup" (an alias of "fields") is the
 * lookup scope, "update" the update scope (1..SL_STATE_FIELDS_MAX fields,
 * pairing up with the lookup scope; default: the same).  "update" is an
 * error on any other kind.  Flows match the loaded state with "state=S[/M]".
 *
 * ----------------------------------------------------------------------------
 * Groups (sl_group_parse; ovs-ofctl add-groups syntax)
 * ----------------------------------------------------------------------------
 *
 *   group_id=N,type=TYPE[,bucket=BUCKET]...
 *
 * N is 0..0xffffff00; TYPE all, select, indirect or ff (fast_failover).  A
 * BUCKET is "[weight:W,][watch_port:P,][watch_group:G,][actions=]A[,A]...":
 * the parameters first, then the actions of the action syntax above (no
 * instructions).  weight defaults to 1 in select groups (as ovs-ofctl), 0
 * elsewhere.  A bucket has no match, so set_field needs no prerequisite:
 * a packet without the field is left alone.  Whether the group is valid
 * (an indirect group has one bucket, ...) is the pipeline's call
 * (sl_pipeline_group_add).
 *
 * ----------------------------------------------------------------------------
 * Meters (sl_meter_parse; ovs-ofctl add-meter syntax)
 * ----------------------------------------------------------------------------
 *
 *   meter=N[,kbps|,pktps][,burst][,stats],bands=BAND[ BAND]...
 *   BAND: type=drop|dscp_remark,rate=R[,burst_size=B][,prec_level=P]
 *
 * N is 1..0xffff0000; rates are in kbit/s (kbps, the default) or packets/s
 * (pktps); burst_size in kilobits or packets counts only with "burst"
 * (without it a band's burst is one second of its rate); prec_level 1..3
 * (default 1) is the drop precedence a dscp_remark band adds.  Each
 * "type=" starts a band; separators may be commas or blanks, as in
 * "meter=1 pktps burst bands=type=drop rate=1000 burst_size=10".
 *
 * ----------------------------------------------------------------------------
 * Queues (sl_queue_parse; pipeline.h "Queues")
 * ----------------------------------------------------------------------------
 *
 *   queue=Q,port=P,max_rate=KBPS[,burst=KBIT][,min_rate=KBPS]
 *
 * Q is 0..0xfffffffe, P the OpenFlow port (1..1024), rates in kbit/s, the
 * burst in kilobits (default: one second of max_rate).  A min_rate parses
 * but the pipeline refuses it (no scheduler to guarantee it).
 *
 * ----------------------------------------------------------------------------
 * Flow files (sl_flowfile_load)
 * ----------------------------------------------------------------------------
 *
 * One flow or table declaration per line.  '#' starts a comment that runs to
 * the end of the physical line; blank lines are skipped; a backslash ending a
 * physical line (after comment removal and trailing blanks) joins the next
 * line to it with a space.  A line with a "kind=" key is a table
 * declaration, a line starting "group_id=" a group and one starting
 * "meter=" a meter (put them before the flows that use them), one starting
 * "queue=" a queue, a line
 * starting "state " one flow's state in a state table declared before it
 * (sl_state_line_parse), any other line a flow.  Errors report the number of the
 * first physical line of the logical line.  Loading stops at the first error.
 * A line "fwd-mode=MODES" is a directive (sl_flowfile_load_cb): the switch's
 * forwarding modes (docs/flexforward.md), handed over as text.
 *
 * ----------------------------------------------------------------------------
 * Errors
 * ----------------------------------------------------------------------------
 *
 * Every parser fills a struct sl_parse_error: a message and the offending
 * token (the key=value item or action, truncated to fit), plus file and line
 * when a file is being loaded.  sl_parse_error_format() prints it as
 * "file:line: message (near 'token')".
 */
#ifndef SL_FLOWFILE_H
#define SL_FLOWFILE_H

#include "../core/core.h"
#include "../flow/flow.h"

/** What went wrong and where; strings are always NUL-terminated (possibly empty). */
struct sl_parse_error {
	char file[128]; /* file being loaded, "" when parsing a string */
	unsigned line;  /* 1-based line number, 0 when parsing a string */
	char token[64]; /* the offending token, truncated; "" when there is none */
	char msg[192];  /* what is wrong with it */
};

/**
 * Print an error as "file:line: msg (near 'token')".  The location part is
 * left out when file is empty ("line N: " is printed when only the line is
 * known) and the token part when the token is empty.
 *
 * @param e     The error.
 * @param buf   Output buffer (always NUL-terminated when @size > 0).
 * @param size  Size of @buf in bytes.
 * @return the length the full text needs (snprintf-style; truncated when
 *         >= @size).  Any thread.
 */
int sl_parse_error_format(const struct sl_parse_error *e, char *buf, size_t size);

/**
 * Port names in flow text (ovs-ofctl --names): the caller's map between
 * OpenFlow port numbers and the switch's port names (sluicectl reads them
 * from the port descriptions).  The parsers try a number and the reserved
 * names (LOCAL, ...) first and ask @to_number only for anything else, in
 * in_port=, out_port=, output:, watch_port:.  The formatters print a name
 * @to_name gives only when it reads back as that port: made of
 * [A-Za-z0-9_.:-], neither a number nor a reserved name; else the number.
 */
struct sl_port_names {
	/** The number of the port named @name (@len bytes, not NUL-terminated): 0 or -ENOENT. */
	int (*to_number)(void *arg, const char *name, size_t len, uint32_t *port);
	/** The name of @port, or NULL (the number is printed). */
	const char *(*to_name)(void *arg, uint32_t port);
	void *arg; /* passed to both */
};

/**
 * Parse one flow in ovs-ofctl add-flow syntax (see the file comment).
 * "actions=" is required.
 *
 * @param text  The flow, NUL-terminated (e.g. "tcp,tp_dst=80 actions=output:2").
 * @param fs    Out: the spec (sl_flow_spec_init defaults for what @text does
 *              not say).  Undefined after an error.
 * @param err   Out: filled on error; may be NULL.
 * @return 0; -EINVAL for any syntax or semantic error (unknown key, bad
 *         value, missing prerequisite, goto_table backwards, missing
 *         "actions=", ...); -E2BIG for too many match fields or actions.
 *         Any thread.
 */
int sl_flow_parse(const char *text, struct sl_flow_spec *fs, struct sl_parse_error *err);

/**
 * Parse a flow filter in ovs-ofctl del-flows / dump-flows syntax: the same
 * keys and match as sl_flow_parse, but "actions=" is an error, table_id is
 * 255 (all tables) unless "table=" is given, and the flow-mod flags and
 * timeouts are rejected.  Meant for sl_pipeline_flow_del and dump filters.
 *
 * @param text  The filter; "" matches everything.
 * @param fs    Out: the filter spec.
 * @param err   Out: filled on error; may be NULL.
 * @return 0, -EINVAL, -E2BIG as sl_flow_parse.  Any thread.
 */
int sl_flow_parse_filter(const char *text, struct sl_flow_spec *fs, struct sl_parse_error *err);

/**
 * Parse a flow filter as sl_flow_parse_filter does, plus ovs-ofctl's
 * "out_port=P" (1..0xffffff00 or a reserved port name) and "out_group=G"
 * (0..0xffffff00) keys, which select flows by their output actions (the
 * OpenFlow flow_mod / flow-stats out_port and out_group fields; "ANY" is
 * the default: no filter).  For sluicectl dump-flows and del-flows.
 *
 * @param text       The filter; "" matches everything.
 * @param fs         Out: the filter spec.
 * @param out_port   Out: the port, SL_PORT_ANY when not given.
 * @param out_group  Out: the group, SL_GROUP_ID_ANY when not given.
 * @param err        Out: filled on error; may be NULL.
 * @return 0, -EINVAL, -E2BIG as sl_flow_parse.  Any thread.
 */
int sl_flow_parse_filter_out(const char *text, struct sl_flow_spec *fs, uint32_t *out_port,
			     uint32_t *out_group, struct sl_parse_error *err);

/**
 * sl_flow_parse, sl_flow_parse_filter_out and sl_group_parse that also read
 * port names through @pn (NULL: numbers and reserved names only).  A name
 * @pn does not know is an error naming it ("bad port 'x'...").  Any thread
 * (@pn's callbacks run on it).
 */
int sl_flow_parse_names(const char *text, const struct sl_port_names *pn, struct sl_flow_spec *fs,
			struct sl_parse_error *err);
int sl_flow_parse_filter_names(const char *text, const struct sl_port_names *pn,
			       struct sl_flow_spec *fs, uint32_t *out_port, uint32_t *out_group,
			       struct sl_parse_error *err);
int sl_group_parse_names(const char *text, const struct sl_port_names *pn, struct sl_group_spec *gs,
			 struct sl_parse_error *err);

/**
 * Parse a group in ovs-ofctl add-groups syntax (see the file comment).
 *
 * @param text  The line.
 * @param gs    Out: the group (buckets past n_buckets are left as they were).
 * @param err   Out: filled on error; may be NULL.
 * @return 0, -EINVAL (err says where), -E2BIG (too many buckets or actions).
 *         Any thread.
 */
int sl_group_parse(const char *text, struct sl_group_spec *gs, struct sl_parse_error *err);

/**
 * Print a flow in canonical ovs-ofctl-like syntax, e.g.
 * "table=0, priority=100,ip,in_port=1,nw_dst=10.0.0.0/8 actions=dec_ttl,output:2".
 *
 * Layout: "[cookie=V[/M], ]table=N, [idle_timeout=N, ][hard_timeout=N, ]
 * [FLAG, ]...priority=N[,MATCH] actions=ACTIONS".  Counters and durations
 * are the caller's to add.  The match starts with the shorthand that covers
 * dl_type and nw_proto (ip, tcp6, ...), then the other fields in registry
 * order (raw fields last), each with the name sl_flow_parse reads: IPv4/IPv6
 * masks print as "/LEN" when they are prefixes, other masks in hex, full
 * masks not at all.  sl_flow_parse reads the text back to an equal spec
 * (same fields, values and masks, possibly in another order) for every spec
 * sl_flow_parse can produce.  Specs from elsewhere that this syntax cannot
 * express (an empty apply_actions instruction, a partial mask on a field the
 * parser does not mask) print as closely as possible.
 *
 * @param fs    The flow.
 * @param buf   Output buffer (always NUL-terminated when @size > 0).
 * @param size  Size of @buf in bytes; 1024 fits typical flows, 4096 any.
 * @return the length the full text needs (snprintf-style: truncated when
 *         >= @size).  Any thread.
 */
int sl_flow_format(const struct sl_flow_spec *fs, char *buf, size_t size);
/**
 * sl_flow_format, sl_flow_format_match and sl_flow_format_actions that print
 * port names through @pn where they read back (see struct sl_port_names);
 * @pn NULL prints numbers.  @return as sl_flow_format.  Any thread.
 */
int sl_flow_format_names(const struct sl_flow_spec *fs, const struct sl_port_names *pn, char *buf,
			 size_t size);
int sl_flow_format_match_names(const struct sl_match *m, const struct sl_port_names *pn, char *buf,
			       size_t size);
int sl_flow_format_actions_names(const struct sl_instructions *in, const struct sl_port_names *pn,
				 char *buf, size_t size);

/**
 * One port as the formatters print it: its name through @pn when that reads
 * back, else the reserved name (LOCAL, ...) or the number.  @return as
 * sl_flow_format.  Any thread.
 */
int sl_port_format(uint32_t port, const struct sl_port_names *pn, char *buf, size_t size);

/**
 * Parse a meter (ovs-ofctl add-meter syntax; see "Meters" above).
 * @return 0 or -errno with @err set.  Any thread.
 */
int sl_meter_parse(const char *text, struct sl_meter_spec *ms, struct sl_parse_error *err);
/**
 * Parse a state line, "state TABLE KEY STATE [idle_ms=N] [hard_ms=N]
 * [rollback=S]" (sluicectl add-states' syntax after the word "state"): KEY
 * gives the state table's lookup-scope fields in match syntax
 * (ip,nw_src=10.0.0.1).  @return 0 or -EINVAL with @err set.  Any thread.
 */
int sl_state_line_parse(const char *text, uint8_t *table_id, struct sl_match *key,
			struct sl_state_set *set, struct sl_parse_error *err);
/** Parse a queue line (see "Queues" above).  @return 0 or -EINVAL.  Any thread. */
int sl_queue_parse(const char *text, struct sl_queue_spec *qs, struct sl_parse_error *err);
/** Print a queue in the syntax sl_queue_parse reads.  @return as sl_flow_format. */
int sl_queue_format(const struct sl_queue_spec *qs, char *buf, size_t size);

/** Print a meter in the syntax sl_meter_parse reads.  @return as sl_flow_format. */
int sl_meter_format(const struct sl_meter_spec *ms, char *buf, size_t size);

/**
 * Print only a match, as sl_flow_format does between "priority=N," and
 * " actions=" ("" for an empty match).
 *
 * @return snprintf-style length.  Any thread.
 */
int sl_flow_format_match(const struct sl_match *m, char *buf, size_t size);

/**
 * Print only instructions, as sl_flow_format does after "actions="
 * ("drop" when there is none).
 *
 * @return snprintf-style length.  Any thread.
 */
int sl_flow_format_actions(const struct sl_instructions *in, char *buf, size_t size);

/**
 * Parse a table declaration line (see the file comment), e.g.
 * "table=2,kind=lpm,fields=nw_dst,size=4096,name=fib".
 *
 * @param text  The declaration; "table=" and "kind=" are required.
 * @param ts    Out: the spec (n_fields 0 and max_entries 0 when omitted).
 * @param err   Out: filled on error; may be NULL.
 * @return 0; -EINVAL (unknown key or kind, bad field, duplicate field);
 *         -E2BIG (more than SL_KEY_FIELDS_MAX fields or a key wider than
 *         SL_KEY_MAX bytes).  Any thread.
 */
int sl_table_spec_parse(const char *text, struct sl_table_spec *ts, struct sl_parse_error *err);

/**
 * Print a table declaration that sl_table_spec_parse reads back to an equal
 * spec: "table=2,kind=lpm,fields=nw_dst,size=4096,name=fib" (optional parts
 * left out when empty).
 *
 * @return snprintf-style length.  Any thread.
 */
int sl_table_spec_format(const struct sl_table_spec *ts, char *buf, size_t size);

/** Loader callback for a table declaration; return 0 or -errno, with err->msg set. */
typedef int (*sl_flowfile_table_fn)(void *arg, const struct sl_table_spec *ts,
				    struct sl_parse_error *err);
/** Loader callback for a flow; return 0 or -errno, with err->msg set. */
typedef int (*sl_flowfile_flow_fn)(void *arg, const struct sl_flow_spec *fs,
				   struct sl_parse_error *err);

/**
 * Load a flow file (see the file comment): parse each logical line and hand
 * it to @on_table or @on_flow, in file order, stopping at the first error.
 *
 * While a callback runs, err->file and err->line name the item's file and
 * (first physical) line, so a callback that forwards items elsewhere can
 * remember where each came from.
 *
 * A callback reports a failure by returning -errno after writing a message
 * to err->msg (and, optionally, err->token); the loader then adds the file
 * name and line, a token (the start of the line) when the callback gave none
 * and a message (strerror) when it gave none.  A NULL callback accepts every
 * line of its kind, which makes the loader a syntax checker.
 *
 * @param path      File to read.
 * @param on_table  Called for each table declaration, or NULL.
 * @param on_flow   Called for each flow, or NULL.
 * @param arg       Passed to the callbacks.
 * @param err       Out: filled on error; may be NULL.
 * @return 0; -errno from fopen/read (-ENOENT, -EACCES, ...); -EINVAL or
 *         -E2BIG from the parsers; -ENOMEM; or a callback's negative return.
 *         Control thread (the callbacks usually change a pipeline).
 */
int sl_flowfile_load(const char *path, sl_flowfile_table_fn on_table, sl_flowfile_flow_fn on_flow,
		     void *arg, struct sl_parse_error *err);

/**
 * Loader callback for a directive line "NAME=VALUE" (today only
 * "fwd-mode=MODES"): @value is the text after '=', trimmed.  Return 0 or
 * -errno with err->msg set.
 */
typedef int (*sl_flowfile_directive_fn)(void *arg, const char *name, const char *value,
					struct sl_parse_error *err);

/** Loader callback for a group line; return 0 or -errno, with err->msg set. */
typedef int (*sl_flowfile_group_fn)(void *arg, const struct sl_group_spec *gs,
				    struct sl_parse_error *err);

/** Loader callback for a meter line; return 0 or -errno, with err->msg set. */
typedef int (*sl_flowfile_meter_fn)(void *arg, const struct sl_meter_spec *ms,
				    struct sl_parse_error *err);

/** Loader callback for a queue line. */
typedef int (*sl_flowfile_queue_fn)(void *arg, const struct sl_queue_spec *qs,
				    struct sl_parse_error *err);

/** Loader callback for a state line (one flow's state in a state table). */
typedef int (*sl_flowfile_state_fn)(void *arg, uint8_t table_id, const struct sl_match *key,
				    const struct sl_state_set *set, struct sl_parse_error *err);

/** The callbacks of sl_flowfile_load_cb; any may be NULL (accepts lines of its kind). */
struct sl_flowfile_callbacks {
	sl_flowfile_table_fn on_table;
	sl_flowfile_flow_fn on_flow;
	sl_flowfile_directive_fn on_directive;
	sl_flowfile_group_fn on_group;
	sl_flowfile_meter_fn on_meter;
	sl_flowfile_state_fn on_state;
	sl_flowfile_queue_fn on_queue;
	const struct sl_port_names *ports; /* port names in flows and groups, or NULL */
};

/**
 * sl_flowfile_load with directives: the same, plus @cb->on_directive for
 * each "fwd-mode=" line.  sl_flowfile_load(path, t, f, arg, err) is this
 * with on_directive NULL.  Control thread.
 */
int sl_flowfile_load_cb(const char *path, const struct sl_flowfile_callbacks *cb, void *arg,
			struct sl_parse_error *err);

#endif /* SL_FLOWFILE_H */
