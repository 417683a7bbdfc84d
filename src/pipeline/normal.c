/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * output:NORMAL's MAC learning table (the forwarding database, FDB): which
 * port a (VLAN, MAC) was last seen on, aged out after a while.  The NORMAL
 * action itself (learn, look up, forward or flood) is in pipeline_run.c.
 *
 * Every worker learns and looks up at once without a lock: an entry is two
 * 64-bit words, the key (VLAN and MAC, top bit set when valid) and the value
 * (port, a 16-bit tag of the key, the second it was last seen), each stored
 * and loaded whole.  A reader that meets a key and a value written by two
 * different learners sees a tag that does not match the key and takes it as
 * unknown: the packet is flooded, never sent to a wrong port.  Sets of four
 * ways; a new address takes an empty or the stalest way.
 */
#include "pipeline.h"
#include "pipeline_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FDB_SETS 4096 /* x 4 ways: 16,384 addresses */
#define FDB_WAYS 4
#define FDB_VALID (UINT64_C(1) << 63)

struct fdb_entry {
	uint64_t key; /* FDB_VALID | vlan << 48 | mac */
	uint64_t val; /* port << 48 | tag << 32 | second last seen */
};

struct pl_fdb {
	struct fdb_entry e[FDB_SETS][FDB_WAYS];
	uint64_t hz;    /* TSC ticks per second */
	uint64_t t0;    /* TSC of creation: seconds count from here */
	uint32_t aging; /* seconds an address is kept without traffic */
};

int
pl_fdb_create(struct sl_pipeline *pl)
{
	/* aligned_alloc wants a size that is a multiple of the alignment (C11). */
	pl->fdb = aligned_alloc(64, (sizeof(*pl->fdb) + 63) / 64 * 64);
	if (pl->fdb == NULL)
		return -ENOMEM;
	memset(pl->fdb, 0, sizeof(*pl->fdb));
	pl->fdb->hz = sl_pipeline_tsc_hz();
	pl->fdb->t0 = sl_pipeline_tsc();
	pl->fdb->aging = SL_MAC_AGING_DEFAULT;
	return 0;
}

void
pl_fdb_destroy(struct sl_pipeline *pl)
{
	free(pl->fdb);
	pl->fdb = NULL;
}

static inline uint64_t
fdb_key(uint16_t vlan, const uint8_t *mac)
{
	uint64_t k = FDB_VALID | (uint64_t)(vlan & 0xfff) << 48;

	for (unsigned i = 0; i < 6; i++)
		k |= (uint64_t)mac[i] << (40 - 8 * i);
	return k;
}

static inline uint64_t
fdb_hash(uint64_t key)
{
	key ^= key >> 29;
	key *= 0xbf58476d1ce4e5b9ull;
	return key ^ (key >> 32);
}

static inline uint32_t
fdb_now(const struct pl_fdb *f, uint64_t tsc)
{
	return (uint32_t)((tsc - f->t0) / f->hz);
}

/* Entries keep 16 bits of port: numbered ports fit, LOCAL is stored as 0xffff. */
static inline uint32_t
fdb_port_pack(uint32_t port)
{
	return port == SL_PORT_LOCAL ? 0xffff : port & 0xffff;
}

static inline uint32_t
fdb_port_unpack(uint64_t val)
{
	uint32_t port = (uint32_t)(val >> 48);

	return port == 0xffff ? SL_PORT_LOCAL : port;
}

void
pl_fdb_learn(struct pl_fdb *f, uint16_t vlan, const uint8_t *mac, uint32_t port, uint64_t tsc)
{
	uint64_t key = fdb_key(vlan, mac), h = fdb_hash(key);
	struct fdb_entry *set = f->e[h & (FDB_SETS - 1)];
	uint32_t now = fdb_now(f, tsc), oldest = UINT32_MAX;
	uint64_t val = (uint64_t)fdb_port_pack(port) << 48 | (h >> 48) << 32 | now;
	int empty = -1;
	unsigned victim = 0;

	for (unsigned w = 0; w < FDB_WAYS; w++) {
		uint64_t k = __atomic_load_n(&set[w].key, __ATOMIC_RELAXED);
		uint64_t v = __atomic_load_n(&set[w].val, __ATOMIC_RELAXED);
		if (k == key) {
			/* Known here: rewrite only when it moved or a second went by (shared lines). */
			if (fdb_port_unpack(v) != port || (uint32_t)v != now)
				__atomic_store_n(&set[w].val, val, __ATOMIC_RELAXED);
			return;
		}
		if (!(k & FDB_VALID)) {
			if (empty < 0)
				empty = (int)w;
		} else if ((uint32_t)v < oldest) {
			oldest = (uint32_t)v;
			victim = w;
		}
	}
	if (empty >= 0)
		victim = (unsigned)empty;
	/* Invalidate, then value, then key: a reader never pairs this key with an old value. */
	__atomic_store_n(&set[victim].key, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&set[victim].val, val, __ATOMIC_RELEASE);
	__atomic_store_n(&set[victim].key, key, __ATOMIC_RELEASE);
}

uint32_t
pl_fdb_lookup(const struct pl_fdb *f, uint16_t vlan, const uint8_t *mac, uint64_t tsc)
{
	uint64_t key = fdb_key(vlan, mac), h = fdb_hash(key);
	const struct fdb_entry *set = f->e[h & (FDB_SETS - 1)];
	uint32_t now = fdb_now(f, tsc), aging = __atomic_load_n(&f->aging, __ATOMIC_RELAXED);

	for (unsigned w = 0; w < FDB_WAYS; w++) {
		if (__atomic_load_n(&set[w].key, __ATOMIC_ACQUIRE) != key)
			continue;
		uint64_t v = __atomic_load_n(&set[w].val, __ATOMIC_ACQUIRE);
		/* Signed age: another core's clock may be a hair ahead of ours. */
		if (((v >> 32) & 0xffff) != (h >> 48) ||
		    (int32_t)(now - (uint32_t)v) > (int32_t)aging)
			return 0; /* torn by a concurrent learner, or aged out: unknown */
		return fdb_port_unpack(v);
	}
	return 0;
}

unsigned
sl_pipeline_fdb_dump(const struct sl_pipeline *pl, struct sl_fdb_entry *out, unsigned max)
{
	const struct pl_fdb *f = pl->fdb;
	uint32_t now = fdb_now(f, sl_pipeline_tsc());
	unsigned n = 0;

	for (unsigned s = 0; s < FDB_SETS && n < max; s++) {
		for (unsigned w = 0; w < FDB_WAYS && n < max; w++) {
			uint64_t k = __atomic_load_n(&f->e[s][w].key, __ATOMIC_ACQUIRE);
			uint64_t v = __atomic_load_n(&f->e[s][w].val, __ATOMIC_ACQUIRE);
			int32_t age = (int32_t)(now - (uint32_t)v);
			if (!(k & FDB_VALID) || ((v >> 32) & 0xffff) != (fdb_hash(k) >> 48) ||
			    age > (int32_t)f->aging)
				continue;
			out[n].vlan = (uint16_t)((k >> 48) & 0xfff);
			for (unsigned i = 0; i < 6; i++)
				out[n].mac[i] = (uint8_t)(k >> (40 - 8 * i));
			out[n].port = fdb_port_unpack(v);
			out[n].age = age > 0 ? (uint32_t)age : 0;
			n++;
		}
	}
	return n;
}

void
sl_pipeline_fdb_flush(struct sl_pipeline *pl, uint32_t port)
{
	struct pl_fdb *f = pl->fdb;

	for (unsigned s = 0; s < FDB_SETS; s++)
		for (unsigned w = 0; w < FDB_WAYS; w++)
			if (port == 0 || fdb_port_unpack(f->e[s][w].val) == port)
				__atomic_store_n(&f->e[s][w].key, 0, __ATOMIC_RELAXED);
}
