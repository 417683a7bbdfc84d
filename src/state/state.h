/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * state: bounded per-flow state tables for stateful forwarding (OpenState).
 *
 * OpenState (Bianchi et al.; the fast-switch design ports it to an accelerated
 * OfSoftSwitch) splits a stateful stage in two: a *state table* maps a
 * flow, named by the fields of its *lookup scope*, to a 32-bit state
 * (default 0), and the XFSM table that follows matches that state like any
 * other field and runs actions, among them set_state, which writes the
 * state of the flow named by the *update scope* fields of the same packet.
 * The two scopes may differ (lookup nw_src+nw_dst, update nw_dst+nw_src), so
 * that a reply changes the state of the request's flow.  They must list the
 * same number of fields of pairwise equal widths: the update key of one
 * packet is compared with the lookup keys of others.
 *
 * An entry carries, besides its state, an idle timeout (since the last
 * lookup that found it or the last set), a hard timeout (since the set) and
 * a rollback state: once a timeout has passed, the flow is in the rollback
 * state with no timeouts (OpenState's semantics).  An entry in state 0 with
 * no timeouts is no different from no entry at all and is removed.
 * Timeouts are kept to the millisecond: `now` is taken as floor(now /
 * ceil(tsc_hz / 1000)) ms, and a timeout of T ms has passed once that count
 * is T past the count at the set (or last hit).
 *
 * Bounds (packets are untrusted): the table holds at most `capacity`
 * entries, in a fixed array allocated at creation.  Lookups never insert;
 * only set_state (a flow's action, or the controller) does.  A set that
 * needs a new entry when the table (or the key's two buckets, after one
 * cuckoo move) is full reuses an entry whose timeout passed and whose
 * rollback state is 0 (counted in `evicted`), and is otherwise refused
 * (counted in `refused`): spoofed traffic can fill the table only through
 * rules that set states, and never past capacity.
 *
 * Layout: a two-choice bucketised hash whose buckets hold the entries
 * inline: the keys (compared in full), the states and each entry's timeout
 * as a 32-bit millisecond deadline that a hit moves on by the idle
 * timeout.  A bucket is one 64-byte line for keys of 8 bytes (3 ways; the
 * lookup scopes nw_src, dl_dst, nw_src+nw_dst are such keys) and 2 to 4
 * lines for wider keys (3 or 4 ways).  A key lives in its primary bucket
 * unless that was full (then in its secondary, after up to two cuckoo moves
 * of other keys); the primary counts its keys living elsewhere, so a lookup
 * reads one bucket unless that count is not 0.  The rest of an entry
 * (rollback state, configured timeouts, 64-bit deadlines) is a 32-byte cold
 * record apart, read when an entry is set to something new, expires, is
 * dumped, or has timeouts the 32-bit deadline cannot hold ("slow" entries:
 * a timeout above 2^28 ms, about 3.1 days, or idle and hard together; every
 * hit of those reads the cold record).  A set_state that only restarts the
 * idle timeout of the state a flow is already in writes the deadline word
 * and nothing else.  Slots: 1.25 per unit of capacity, any count (no power
 * of two): 67 bytes per entry of capacity with 8-byte keys.
 * sl_state_footprint() gives the bytes.
 *
 * set_state hints: the lookup stage leaves in each packet (sl_pkt
 * state_slot/state_gen/state_owner) the slot of its update-scope entry;
 * sl_state_set_pkt uses it without extracting or searching while the
 * table's generation (bumped whenever an entry leaves or moves) and the
 * packet's headers (sl_pkt_field_write and sl_pkt_reparse drop the hint)
 * are unchanged.
 *
 * Concurrency: one writer.  The state table is written by the datapath
 * worker that runs the pipeline (set_state is a datapath action, and an
 * idle timeout refreshes on every lookup), so there is exactly one writer,
 * that worker, and it never locks:
 *  - lookups and sets of the worker are plain accesses;
 *  - the control thread never writes entries: it posts set/delete/clear
 *    commands on a single-producer single-consumer ring that the worker
 *    drains in sl_state_service() (before its lookups and when idle);
 *    when no worker runs (startup, unit tests) the control thread is the
 *    single writer and calls the writer functions itself;
 *  - the control thread reads entries for dumps through a per-bucket
 *    sequence count (seqlock): the worker never waits, the reader retries
 *    (a hit's deadline refresh is a single word store, outside it);
 *  - replacing a table (new scopes or capacity) is the pipeline's business:
 *    it publishes the new table with one pointer store and destroys the
 *    old one after an RCU grace period (pipeline.h).
 * With several workers, each state table still has one writer: the first
 * worker that runs it claims it (sl_state_claim).  Other workers only read
 * it (sl_state_peek_burst: per-entry consistent, timeouts applied to the
 * answer, never to the table) and their set_states are refused and counted
 * in `foreign`: correct states need the traffic of a state table steered to
 * one worker.
 *
 * This component uses only core and pkt (no DPDK): it builds and tests
 * without EAL.
 */
#ifndef SL_STATE_H
#define SL_STATE_H

#include "../core/core.h"
#include "../pkt/pkt.h"

/** Most fields in a lookup or update scope. */
#define SL_STATE_FIELDS_MAX 8
/** Largest capacity a state table may be created with. */
#define SL_STATE_CAPACITY_MAX (1u << 24)
/** Capacity when none is given. */
#define SL_STATE_CAPACITY_DEFAULT 65536u
/** Longest idle or hard timeout, in milliseconds (about 49 days). */
#define SL_STATE_TIMEOUT_MAX_MS UINT32_MAX
/** Slots of the control-to-worker command ring. */
#define SL_STATE_RING 256

struct sl_state;

/** Creation parameters. */
struct sl_state_params {
	const struct sl_field *lookup; /* lookup scope: 1..SL_STATE_FIELDS_MAX fields */
	unsigned n_lookup;
	const struct sl_field *update; /* update scope; n_update 0 = same as lookup */
	unsigned n_update;
	uint32_t capacity; /* entries, 1..SL_STATE_CAPACITY_MAX; 0 = default */
	uint64_t tsc_hz;   /* ticks per second of the `now` arguments, > 0 */
};

/** What a set_state does (an action's arguments, or a controller's command). */
struct sl_state_set {
	uint32_t state;    /* the new state */
	uint32_t rollback; /* state after a timeout (0: the entry goes away) */
	uint32_t idle_ms;  /* 0: no idle timeout */
	uint32_t hard_ms;  /* 0: no hard timeout */
};

/** Counters; written by the one writer, read racily (each word whole) by anyone. */
struct sl_state_stats {
	uint64_t lookups;  /* packets looked up */
	uint64_t hits;     /* ... that found a live entry */
	uint64_t sets;     /* set_state on an existing entry */
	uint64_t inserts;  /* set_state that created an entry */
	uint64_t deletes;  /* entries removed (set to state 0, or by the controller) */
	uint64_t expired;  /* entries whose timeout passed (rolled back or removed) */
	uint64_t evicted;  /* expired entries reused for a new flow when full */
	uint64_t refused;  /* set_state that needed a new entry and found no room */
	uint64_t commands; /* control commands applied */
	uint32_t n_entries;
	uint32_t capacity;
	uint64_t bytes;   /* memory the table holds (sl_state_footprint) */
	uint64_t foreign; /* set_states refused because the worker was not the table's writer */
};

/** A control command (sl_state_ctl_post). */
enum sl_state_cmd_op {
	SL_STATE_CMD_SET = 1,   /* set the state of one key */
	SL_STATE_CMD_DEL = 2,   /* remove one key's entry */
	SL_STATE_CMD_CLEAR = 3, /* remove every entry */
};

/*
 * Widest state key.  Narrower than a table's (SL_KEY_MAX): a state table keys
 * on a flow's identity (a 5-tuple, addresses), and its buckets and command
 * ring are sized by it.
 */
#define SL_STATE_KEY_MAX 64

struct sl_state_cmd {
	uint8_t op;                    /* enum sl_state_cmd_op */
	struct sl_state_set set;       /* SL_STATE_CMD_SET */
	uint8_t key[SL_STATE_KEY_MAX]; /* lookup-scope key (sl_state_layout(s, false) encoding) */
};

/** One entry as a dump reports it. */
struct sl_state_entry_info {
	const uint8_t *key; /* lookup-scope key, sl_state_layout(s, false)->key_size bytes */
	uint32_t state;     /* current state (the rollback state when a timeout passed) */
	uint32_t rollback;
	uint32_t idle_ms;      /* configured idle timeout, 0 = none */
	uint32_t hard_ms;      /* configured hard timeout, 0 = none */
	uint32_t idle_left_ms; /* until the idle timeout fires (0 with none) */
	uint32_t hard_left_ms; /* until the hard timeout fires (0 with none) */
};

/** Dump callback; return non-zero to stop. */
typedef int (*sl_state_dump_fn)(const struct sl_state_entry_info *e, void *arg);

/**
 * Create a state table.
 *
 * @param p         Parameters.
 * @param out       Out: the table.
 * @param err       Out: why it failed, naming the offending value (may be NULL).
 * @param err_size  Size of @err.
 * @return 0; -EINVAL (no lookup fields, too many, scopes of different
 *         shapes, capacity out of range, tsc_hz 0, a field that cannot key a
 *         state such as `state` itself); -E2BIG (key wider than SL_STATE_KEY_MAX);
 *         -ENOMEM.  Control thread.
 */
int sl_state_create(const struct sl_state_params *p, struct sl_state **out, char *err,
		    size_t err_size);

/** Destroy (NULL-safe).  Control thread, after the last worker left it (grace period). */
void sl_state_destroy(struct sl_state *s);

/** The lookup scope's (@update false) or update scope's key layout.  Any thread. */
const struct sl_key_layout *sl_state_layout(const struct sl_state *s, bool update);
/** Capacity in entries.  Any thread. */
uint32_t sl_state_capacity(const struct sl_state *s);
/** Bytes the table holds in memory (entries, signatures, ring).  Any thread. */
size_t sl_state_footprint(const struct sl_state *s);
/** Bytes a table of @capacity entries with @key_size-byte keys takes (as sl_state_footprint). */
size_t sl_state_footprint_for(uint32_t capacity, unsigned key_size);

/**
 * Look up the state of each lane's packet and store it in pkts[i].state
 * (0 when the flow has no entry).  Refreshes idle timeouts; applies the
 * rollback of entries whose timeout passed.  Staged: extract every key,
 * hash and prefetch the primary buckets, compare, prefetch the secondary
 * buckets of the lanes whose primary has overflowed and that did not find
 * their key, compare.  No allocation, no locks.
 *
 * @param s      The table.
 * @param pkts   Packets of the burst.
 * @param lanes  Lanes to look up (bit i: pkts[i]).
 * @param now    Current time in ticks (params.tsc_hz per second).
 * @param keys   Scratch: one SL_KEY_MAX-byte key per lane.
 * Writer (the worker).
 */
void sl_state_lookup_burst(struct sl_state *s, struct sl_pkt *pkts, uint64_t lanes, uint64_t now,
			   uint8_t (*keys)[SL_KEY_MAX]);

/**
 * Make @who (a worker's identity, e.g. its pipeline context) the table's
 * writer if it has none yet.
 *
 * @return true when @who is the writer.  Any worker (one atomic load once claimed).
 */
bool sl_state_claim(struct sl_state *s, const void *who);

/**
 * Lookup for a worker that is not the writer: like sl_state_lookup_burst,
 * but it writes nothing to the table (no idle refresh, no rollback, no
 * counters, no set_state hints); entries are read through their sequence
 * counts, and a passed timeout yields the rollback state.  Any worker.
 */
void sl_state_peek_burst(const struct sl_state *s, struct sl_pkt *pkts, uint64_t lanes,
			 uint64_t now, uint8_t (*keys)[SL_KEY_MAX]);

/** Count a set_state refused to a worker that is not the writer.  Any worker (atomic). */
void sl_state_count_foreign(struct sl_state *s);

/**
 * set_state: set the state of the flow named by @p's update-scope fields.
 *
 * @return 0; -ENOSPC when a new entry was needed and there was no room
 *         (counted in `refused`).  Writer (the worker).
 */
int sl_state_set_pkt(struct sl_state *s, struct sl_pkt *p, const struct sl_state_set *a,
		     uint64_t now);

/**
 * Set the state of a key (lookup-scope encoding); state 0 with rollback 0
 * removes the entry.
 *
 * @return 0 or -ENOSPC (refused).  Writer.
 */
int sl_state_set_key(struct sl_state *s, const uint8_t *key, const struct sl_state_set *a,
		     uint64_t now);

/** Remove a key's entry.  @return 0 or -ENOENT.  Writer. */
int sl_state_del_key(struct sl_state *s, const uint8_t *key);

/** Remove every entry.  Writer. */
void sl_state_clear(struct sl_state *s);

/**
 * The current state of a key (0 without an entry), without refreshing or
 * expiring anything.  Writer, or the control thread when no worker runs.
 */
uint32_t sl_state_get_key(const struct sl_state *s, const uint8_t *key, uint64_t now);

/**
 * Apply one command directly.  @return as the command's writer function.
 * Writer (the control thread uses it only when no worker runs).
 */
int sl_state_cmd_apply(struct sl_state *s, const struct sl_state_cmd *c, uint64_t now);

/**
 * Worker housekeeping: apply up to SL_STATE_RING posted commands, then
 * check one bucket for passed timeouts (so expired entries leave even
 * without traffic, and every 32-bit deadline is met long before it could
 * wrap: a bucket is visited every 8 * buckets calls).  A few loads when
 * there is nothing to do.
 * Writer (the worker).
 */
void sl_state_service(struct sl_state *s, uint64_t now);

/**
 * Post a command for the worker (applied in its next sl_state_service).
 *
 * @return 0; -ENOBUFS when SL_STATE_RING commands are pending.
 *         Control thread (the single producer).
 */
int sl_state_ctl_post(struct sl_state *s, const struct sl_state_cmd *c);

/** True when posted commands wait for the worker.  Control thread. */
bool sl_state_ctl_pending(const struct sl_state *s);

/**
 * Visit every entry (consistent per bucket: seqlock).  Entries whose
 * timeout passed are reported in their rollback state (or not at all when
 * that is 0).
 *
 * @return the callback's non-zero value or 0.  Control thread, any time.
 */
int sl_state_dump(const struct sl_state *s, uint64_t now, sl_state_dump_fn fn, void *arg);

/** Read the counters.  Any thread. */
void sl_state_stats_get(const struct sl_state *s, struct sl_state_stats *st);

#endif /* SL_STATE_H */
