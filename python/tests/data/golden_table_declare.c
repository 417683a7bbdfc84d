/*
 * Regenerates table_declare_golden.txt: the bytes of Sluice's C encoder
 * (sl_ofp_table_declare_encode) for every field alone, test_ofp.c's round-trip
 * set in each kind, raw fields of several widths, and an empty field list.
 * test_sluice_ofp.py checks sluice.ofp.table_declare against each line.
 *
 *   cc -std=gnu11 -I src -I build -o /tmp/golden python/tests/data/golden_table_declare.c \
 *      build/src/ofp/libsl_ofp.a build/src/pipeline/libsl_pipeline.a \
 *      build/src/table/libsl_table.a build/src/pkt/libsl_pkt.a build/src/core/libsl_core.a \
 *      $(pkg-config --cflags --libs libdpdk) \
 *   && /tmp/golden > python/tests/data/table_declare_golden.txt
 */
#include "ofp/ofp.h"
#include "pkt/pkt.h"
#include <stdio.h>
#include <string.h>

static void
emit(const char *label, const struct sl_table_spec *ts, uint32_t xid)
{
	struct sl_ofp_buf b;
	sl_ofp_buf_init(&b);
	if (sl_ofp_table_declare_encode(&b, xid, ts) != 0) {
		printf("%s ERROR\n", label);
		return;
	}
	printf("%s ", label);
	for (size_t i = 0; i < b.len; i++)
		printf("%02x", b.data[i]);
	printf("\n");
	sl_ofp_buf_free(&b);
}

int
main(void)
{
	static const enum sl_table_kind kinds[] = {SL_TABLE_DIRECT, SL_TABLE_EXACT, SL_TABLE_LPM,
						   SL_TABLE_MASK};
	static const char *kn[] = {"direct", "exact", "lpm", "mask"};
	struct sl_table_spec ts;
	/* every named field alone, in an exact table 7 of 100 entries named after it */
	for (int id = 0; id < SL_FIELD__MAX; id++) {
		if (id == SL_FIELD_RAW)
			continue;
		memset(&ts, 0, sizeof(ts));
		ts.table_id = 7;
		ts.kind = SL_TABLE_EXACT;
		ts.n_fields = 1;
		ts.fields[0].id = (uint8_t)id;
		ts.max_entries = 100;
		snprintf(ts.name, sizeof(ts.name), "%s", sl_field_name(id));
		char label[64];
		snprintf(label, sizeof label, "field:%s", sl_field_name(id));
		emit(label, &ts, 1);
	}
	/* test_ofp.c's round-trip set, each kind */
	for (int k = 0; k < 4; k++) {
		memset(&ts, 0, sizeof(ts));
		ts.table_id = 3;
		ts.kind = kinds[k];
		ts.n_fields = 4;
		ts.fields[0].id = SL_FIELD_IN_PORT;
		ts.fields[1].id = SL_FIELD_IPV6_FLABEL;
		ts.fields[2] = (struct sl_field){.id = SL_FIELD_RAW,
						 .raw_base = SL_RAW_BASE_L4,
						 .raw_bit_off = 96,
						 .raw_n_bits = 12};
		ts.fields[3].id = SL_FIELD_IP_TTL;
		ts.max_entries = 0xfffffffe;
		strcpy(ts.name, "0123456789012345678901234567890");
		char label[64];
		snprintf(label, sizeof label, "roundtrip:%s", kn[k]);
		emit(label, &ts, 0xdeadbeef);
	}
	/* raw fields of several widths and bases */
	static const struct {
		int base, off, bits;
	} raws[] = {{0, 0, 1}, {0, 96, 16}, {1, 8, 8}, {2, 0, 128}, {1, 65535, 9}, {2, 3, 17}};
	for (unsigned i = 0; i < sizeof raws / sizeof raws[0]; i++) {
		memset(&ts, 0, sizeof(ts));
		ts.table_id = 253;
		ts.kind = SL_TABLE_MASK;
		ts.n_fields = 1;
		ts.fields[0] = (struct sl_field){.id = SL_FIELD_RAW,
						 .raw_base = raws[i].base,
						 .raw_bit_off = raws[i].off,
						 .raw_n_bits = raws[i].bits};
		char label[64];
		snprintf(label, sizeof label, "raw:%d,%d,%d", raws[i].base, raws[i].off,
			 raws[i].bits);
		emit(label, &ts, 0);
	}
	/* empty field list */
	memset(&ts, 0, sizeof(ts));
	ts.table_id = 0;
	ts.kind = SL_TABLE_DIRECT;
	emit("empty", &ts, 0);
	return 0;
}
