/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Groups, control path: the id -> slot map, adding, modifying and deleting
 * groups, chaining (loops, depth, references), liveness, and reading groups
 * back.  Execution is in pipeline_run.c.
 *
 * Memory: a slot lives until its group is deleted; a body until it is
 * replaced.  Both are retired onto a list freed after the next grace
 * period (sl_pipeline_publish), since workers may still hold them.  A slot
 * that another group's body points at (group action, watch_group) is never
 * deleted alone, so those pointers stay valid as long as the body.
 */
#include "pipeline.h"
#include "pipeline_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Most groups a pipeline holds (OVS's default is 65536 too). */
#define GROUPS_MAX 65536

struct pl_groups {
	unsigned n, cap;
	struct pl_group_slot **slots; /* sorted by id: binary search, ordered dumps */
	unsigned n_retired, retired_cap;
	void **retired;      /* freed after the next grace period */
	uint32_t walk;       /* number of the current graph walk (pl_group_slot.walk) */
	unsigned n_watching; /* installed fast-failover buckets that watch a group */
};

int
pl_groups_create(struct sl_pipeline *pl)
{
	pl->groups = calloc(1, sizeof(*pl->groups));
	return pl->groups != NULL ? 0 : -ENOMEM;
}

static void
body_free(struct pl_group *g)
{
	if (g == NULL)
		return;
	for (unsigned b = 0; b < g->n_buckets; b++) {
		free(g->buckets[b].actions);
		free(g->buckets[b].run);
	}
	free(g);
}

void
pl_groups_destroy(struct sl_pipeline *pl)
{
	struct pl_groups *gs = pl->groups;

	if (gs == NULL)
		return;
	for (unsigned i = 0; i < gs->n; i++) {
		body_free(gs->slots[i]->body);
		free(gs->slots[i]);
	}
	pl_groups_reclaim(pl);
	free(gs->slots);
	free(gs->retired);
	free(gs);
}

/* Position of @id in the sorted slots, or where it would go. */
static unsigned
slot_pos(const struct pl_groups *gs, uint32_t id, bool *found)
{
	unsigned lo = 0, hi = gs->n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (gs->slots[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < gs->n && gs->slots[lo]->id == id;
	return lo;
}

struct pl_group_slot *
pl_group_find(struct sl_pipeline *pl, uint32_t id)
{
	bool found;
	unsigned pos = slot_pos(pl->groups, id, &found);

	return found ? pl->groups->slots[pos] : NULL;
}

void
pl_group_ref(void *slot, int delta)
{
	struct pl_group_slot *s = slot;

	s->ref_count = (unsigned)((int)s->ref_count + delta);
}

/* Retire memory: freed after the next grace period.  Falls back to waiting now. */
static void
retire(struct sl_pipeline *pl, void *mem, bool is_body)
{
	struct pl_groups *gs = pl->groups;

	if (mem == NULL)
		return;
	if (gs->n_retired + 2 > gs->retired_cap) {
		unsigned cap = gs->retired_cap ? gs->retired_cap * 2 : 32;
		void **n = realloc(gs->retired, cap * sizeof(*n));
		if (n == NULL) {
			if (pl->sync != NULL)
				pl->sync(pl->sync_arg);
			is_body ? body_free(mem) : free(mem);
			return;
		}
		gs->retired = n;
		gs->retired_cap = cap;
	}
	/* Tag bodies with the low pointer bit (both are malloc'd, so aligned). */
	gs->retired[gs->n_retired++] = (void *)((uintptr_t)mem | (is_body ? 1u : 0u));
}

bool
pl_groups_dirty(const struct sl_pipeline *pl)
{
	return pl->groups->n_retired > 0;
}

void
pl_groups_reclaim(struct sl_pipeline *pl)
{
	struct pl_groups *gs = pl->groups;

	for (unsigned i = 0; i < gs->n_retired; i++) {
		uintptr_t v = (uintptr_t)gs->retired[i];
		if (v & 1)
			body_free((struct pl_group *)(v & ~(uintptr_t)1));
		else
			free((void *)v);
	}
	gs->n_retired = 0;
}

/*
 * A bucket's actions are always applied as an action set (OpenFlow 1.3.5
 * section 5.6, as Open vSwitch does): one action of each kind (a later one
 * replaces an earlier one, set_field per field), run in the order of section
 * 5.10 - copy TTL inwards, pop VLAN, MPLS, PBB, push MPLS, PBB, VLAN, copy TTL
 * outwards, decrement TTL and MPLS TTL, set TTL and MPLS TTL, set_field,
 * queue, then group or else output.  So "output:1,CONTROLLER" sends to
 * the controller only, and "output:1,group:2" to group 2 only.  The list is fixed when the group is made; @out
 * holds at most @n actions.  Returns how many.
 */
static unsigned
bucket_set(const struct sl_action *a, unsigned n, struct sl_action *out)
{
	static const uint8_t order[] = {
		SL_ACT_COPY_TTL_IN, SL_ACT_POP_VLAN,     SL_ACT_POP_MPLS,   SL_ACT_POP_PBB,
		SL_ACT_PUSH_MPLS,   SL_ACT_PUSH_PBB,     SL_ACT_PUSH_VLAN,  SL_ACT_COPY_TTL_OUT,
		SL_ACT_DEC_NW_TTL,  SL_ACT_DEC_MPLS_TTL, SL_ACT_SET_NW_TTL, SL_ACT_SET_MPLS_TTL};
	const struct sl_action *slot[SL_ARRAY_SIZE(order)] = {NULL}, *sets[SL_ACTIONS_MAX];
	const struct sl_action *queue = NULL, *output = NULL, *group = NULL, *other[SL_ACTIONS_MAX];
	unsigned n_sets = 0, n_other = 0, k = 0;

	for (unsigned i = 0; i < n; i++) {
		unsigned s;
		for (s = 0; s < SL_ARRAY_SIZE(order) && a[i].type != order[s]; s++)
			;
		if (s < SL_ARRAY_SIZE(order)) {
			slot[s] = &a[i];
		} else if (a[i].type == SL_ACT_SET_FIELD) {
			unsigned j;
			for (j = 0; j < n_sets &&
				    !sl_field_equal(&sets[j]->set_field.f, &a[i].set_field.f);
			     j++)
				;
			sets[j] = &a[i];
			n_sets += j == n_sets;
		} else if (a[i].type == SL_ACT_SET_QUEUE) {
			queue = &a[i];
		} else if (a[i].type == SL_ACT_OUTPUT) {
			output = &a[i];
		} else if (a[i].type == SL_ACT_GROUP) {
			group = &a[i];
		} else {
			other[n_other++] = &a[i]; /* nothing else is accepted in a bucket today */
		}
	}
	for (unsigned s = 0; s < SL_ARRAY_SIZE(order); s++)
		if (slot[s] != NULL)
			out[k++] = *slot[s];
	for (unsigned j = 0; j < n_sets; j++)
		out[k++] = *sets[j];
	for (unsigned j = 0; j < n_other; j++)
		out[k++] = *other[j];
	if (queue != NULL)
		out[k++] = *queue;
	/* Section 5.10: a group wins over an output, and comes last (exec_group's "final"). */
	if (group != NULL)
		out[k++] = *group;
	else if (output != NULL)
		out[k++] = *output;
	return k;
}

/* Does any action change the packet (so an "all" bucket needs a private copy)? */
static bool
actions_modify(const struct sl_action *a, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i].type != SL_ACT_OUTPUT && a[i].type != SL_ACT_SET_QUEUE)
			return true;
	return false;
}

/*
 * Weighted hash -> bucket map for select groups: each bucket gets a share of
 * the slots proportional to its weight (largest remainder), at least one if
 * its weight is non-zero.
 */
static void
select_map_build(struct pl_group *g)
{
	uint64_t total = 0;
	unsigned given = 0, n_slots[SL_GROUP_BUCKETS_MAX] = {0};

	for (unsigned b = 0; b < g->n_buckets; b++)
		total += g->buckets[b].weight;
	g->has_select = total > 0;
	if (!g->has_select)
		return;
	for (unsigned b = 0; b < g->n_buckets; b++) {
		n_slots[b] = (unsigned)(g->buckets[b].weight * PL_SELECT_SLOTS / total);
		if (n_slots[b] == 0 && g->buckets[b].weight > 0)
			n_slots[b] = 1;
		given += n_slots[b];
	}
	/* Fix rounding: trim the largest shares or pad the heaviest buckets. */
	while (given > PL_SELECT_SLOTS) {
		unsigned big = 0;
		for (unsigned b = 1; b < g->n_buckets; b++)
			if (n_slots[b] > n_slots[big])
				big = b;
		n_slots[big]--;
		given--;
	}
	for (unsigned b = 0; given < PL_SELECT_SLOTS; b = (b + 1) % g->n_buckets) {
		if (g->buckets[b].weight > 0) {
			n_slots[b]++;
			given++;
		}
	}
	/* Interleave so neighbouring hashes spread over buckets. */
	unsigned pos = 0;
	for (unsigned round = 0; pos < PL_SELECT_SLOTS; round++)
		for (unsigned b = 0; b < g->n_buckets && pos < PL_SELECT_SLOTS; b++)
			if (round < n_slots[b])
				g->select_map[pos++] = (uint8_t)b;
}

/* Validate a spec and build its body. */
static int
body_build(struct sl_pipeline *pl, const struct sl_group_spec *gs, struct pl_group **out, char *err,
	   size_t err_size)
{
	struct pl_group *g;
	int rc;

	if (gs->group_id > SL_GROUP_ID_MAX)
		return pl_err(pl, SL_FAIL_BAD_GROUP_ID, err, err_size, -EINVAL,
			      "group id 0x%x is reserved (> 0x%x)", gs->group_id, SL_GROUP_ID_MAX);
	if (gs->type > SL_GROUP_FF)
		return pl_err(pl, SL_FAIL_BAD_GROUP_TYPE, err, err_size, -EINVAL,
			      "group %u: unknown type %u", gs->group_id, gs->type);
	if (gs->n_buckets > SL_GROUP_BUCKETS_MAX)
		return pl_err(pl, SL_FAIL_BAD_BUCKET, err, err_size, -EINVAL,
			      "group %u: %u buckets (at most %u)", gs->group_id, gs->n_buckets,
			      SL_GROUP_BUCKETS_MAX);
	if (gs->type == SL_GROUP_INDIRECT && gs->n_buckets != 1)
		return pl_err(pl, SL_FAIL_BAD_BUCKET, err, err_size, -EINVAL,
			      "group %u: an indirect group has exactly one bucket (got %u)",
			      gs->group_id, gs->n_buckets);
	for (unsigned b = 0; b < gs->n_buckets; b++) {
		const struct sl_bucket_spec *bs = &gs->buckets[b];
		if (bs->n_actions > SL_ACTIONS_MAX)
			return pl_err(pl, SL_FAIL_BAD_BUCKET, err, err_size, -EINVAL,
				      "group %u bucket %u: too many actions", gs->group_id, b);
		/* Only select groups weigh their buckets (Open vSwitch refuses the rest too). */
		if (gs->type != SL_GROUP_SELECT && bs->weight != 0)
			return pl_err(pl, SL_FAIL_GROUP_WEIGHT, err, err_size, -EINVAL,
				      "group %u bucket %u: weight %u in a group that is not select",
				      gs->group_id, b, bs->weight);
		/* A group that names itself is a loop, not a missing group (it may not exist yet). */
		for (unsigned k = 0; k < bs->n_actions; k++)
			if (bs->actions[k].type == SL_ACT_GROUP &&
			    bs->actions[k].group_id == gs->group_id)
				return pl_err(pl, SL_FAIL_GROUP_LOOP, err, err_size, -ELOOP,
					      "group %u bucket %u: group:%u is the group itself",
					      gs->group_id, b, gs->group_id);
		if (gs->type == SL_GROUP_FF) {
			if (bs->watch_port == SL_PORT_ANY && bs->watch_group == SL_GROUP_ID_ANY)
				return pl_err(
					pl, SL_FAIL_BAD_WATCH, err, err_size, -EINVAL,
					"group %u bucket %u: fast failover needs a watch_port "
					"or a watch_group",
					gs->group_id, b);
			if (bs->watch_port != SL_PORT_ANY &&
			    (bs->watch_port == 0 || bs->watch_port > sl_pipeline_n_ports(pl)))
				return pl_err(pl, SL_FAIL_BAD_WATCH, err, err_size, -EINVAL,
					      "group %u bucket %u: watch_port 0x%x is not an "
					      "existing port",
					      gs->group_id, b, bs->watch_port);
			if (bs->watch_group == gs->group_id)
				return pl_err(pl, SL_FAIL_GROUP_LOOP, err, err_size, -ELOOP,
					      "group %u bucket %u: watches the group itself",
					      gs->group_id, b);
			if (bs->watch_group != SL_GROUP_ID_ANY &&
			    pl_group_find(pl, bs->watch_group) == NULL)
				return pl_err(pl, SL_FAIL_BAD_WATCH, err, err_size, -EINVAL,
					      "group %u bucket %u: watch_group %u does not exist",
					      gs->group_id, b, bs->watch_group);
		}
		rc = pl_check_actions(pl, bs->actions, bs->n_actions, err, err_size);
		if (rc < 0)
			return rc;
	}
	g = calloc(1, sizeof(*g) + gs->n_buckets * sizeof(g->buckets[0]));
	if (g == NULL)
		return pl_err(pl, SL_FAIL_NOMEM, err, err_size, -ENOMEM, "out of memory");
	g->type = gs->type;
	g->n_buckets = gs->n_buckets;
	for (unsigned b = 0; b < gs->n_buckets; b++) {
		const struct sl_bucket_spec *bs = &gs->buckets[b];
		struct pl_bucket *pb = &g->buckets[b];
		pb->weight = gs->type == SL_GROUP_SELECT ? bs->weight : 0;
		pb->watch_port = bs->watch_port;
		pb->watch_group = bs->watch_group;
		pb->n_actions = bs->n_actions;
		if (bs->n_actions > 0) {
			pb->actions = malloc(bs->n_actions * sizeof(*pb->actions));
			pb->run = malloc(bs->n_actions * sizeof(*pb->run));
			if (pb->actions == NULL || pb->run == NULL) {
				body_free(g);
				return pl_err(pl, SL_FAIL_NOMEM, err, err_size, -ENOMEM,
					      "out of memory");
			}
			memcpy(pb->actions, bs->actions, bs->n_actions * sizeof(*pb->actions));
			for (unsigned k = 0; k < bs->n_actions; k++)
				pb->actions[k].ref = NULL;
			pb->n_run = (uint8_t)bucket_set(pb->actions, pb->n_actions, pb->run);
			/* Chained groups: checked to exist above (pl_check_actions). */
			for (unsigned k = 0; k < pb->n_run; k++)
				if (pb->run[k].type == SL_ACT_GROUP)
					pb->run[k].ref = pl_group_find(pl, pb->run[k].group_id);
		}
		if (gs->type == SL_GROUP_FF && bs->watch_group != SL_GROUP_ID_ANY)
			pb->watch_slot = pl_group_find(pl, bs->watch_group);
		pb->modifies = actions_modify(pb->run, pb->n_run);
	}
	if (g->type == SL_GROUP_SELECT)
		select_map_build(g);
	*out = g;
	return 0;
}

/*
 * Chaining.  A body's references are its buckets' group actions (in run,
 * resolved) and fast-failover buckets' watched groups.  The graph they
 * make is acyclic and at most SL_GROUP_CHAIN_MAX deep, so the walks below
 * recurse at most about twice that (a replaced body on top of a valid
 * graph) and visit every group once per walk (walk marks).
 */

/* Run @body for every group @g references (@s), with its kind (@watch: a watch_group). */
#define FOR_EACH_REF(g, s, watch, body)                                                            \
	for (unsigned b_ = 0; b_ < (g)->n_buckets; b_++) {                                         \
		const struct pl_bucket *pb_ = &(g)->buckets[b_];                                   \
		for (unsigned k_ = 0; k_ <= pb_->n_run; k_++) {                                    \
			struct pl_group_slot *s;                                                   \
			bool watch = k_ == pb_->n_run;                                             \
			if (watch)                                                                 \
				s = pb_->watch_slot;                                               \
			else                                                                       \
				s = pb_->run[k_].type == SL_ACT_GROUP ? pb_->run[k_].ref : NULL;   \
			if (s != NULL) {                                                           \
				body                                                               \
			}                                                                          \
		}                                                                                  \
	}

/* Start a graph walk.  Walk 0 is nobody's: new slots start there, and a wrap clears every mark. */
static uint32_t
walk_begin(struct pl_groups *grp)
{
	if (++grp->walk == 0) {
		for (unsigned i = 0; i < grp->n; i++)
			grp->slots[i]->walk = 0;
		grp->walk = 1;
	}
	return grp->walk;
}

/*
 * Count body @g in the groups it references (@delta: +1 installed, -1
 * gone): each referenced group once per kind, as ref_count counts groups.
 */
static void
body_refs_count(struct pl_groups *grp, const struct pl_group *g, int delta)
{
	uint32_t fwd = walk_begin(grp);

	FOR_EACH_REF(g, s, watch, {
		if (!watch && s->walk != fwd) {
			s->walk = fwd;
			s->n_forwarders = (unsigned)((int)s->n_forwarders + delta);
		}
	})
	uint32_t wat = walk_begin(grp);
	FOR_EACH_REF(g, s, watch, {
		if (watch) {
			grp->n_watching = (unsigned)((int)grp->n_watching + delta);
			if (s->walk != wat) {
				s->walk = wat;
				s->n_watchers = (unsigned)((int)s->n_watchers + delta);
			}
		}
	})
}

/*
 * Longest chain from @s in groups (1: it chains to none), with @ov's body
 * taken as @ov_body (a modify being checked).  *loop when @s reaches a
 * group that is on the current path.
 */
static unsigned
chain_height(struct pl_groups *grp, struct pl_group_slot *s, const struct pl_group_slot *ov,
	     const struct pl_group *ov_body, bool *loop)
{
	const struct pl_group *g = s == ov ? ov_body : s->body;
	unsigned h = 0;

	if (s->walk == grp->walk) {
		if (s->walk_state == 1)
			*loop = true;
		return s->walk_value;
	}
	s->walk = grp->walk;
	s->walk_state = 1;
	s->walk_value = 0;
	FOR_EACH_REF(g, r, watch, {
		(void)watch;
		if (!*loop)
			h = SL_MAX(h, chain_height(grp, r, ov, ov_body, loop));
	})
	s->walk_state = 2;
	s->walk_value = (uint8_t)SL_MIN(h + 1, 255u);
	return s->walk_value;
}

/*
 * May body @g be group @gs's (@slot: the group, NULL when it is new)?
 * Refuses loops (spec: OFPGMFC_LOOP) and chains longer than
 * SL_GROUP_CHAIN_MAX through it (CHAINING_UNSUPPORTED, at that depth).
 */
static int
chain_check(struct sl_pipeline *pl, struct pl_group_slot *slot, const struct sl_group_spec *gs,
	    const struct pl_group *g, char *err, size_t err_size)
{
	struct pl_groups *grp = pl->groups;
	unsigned h = 0;
	bool loop = false;

	walk_begin(grp);
	if (slot == NULL) {
		/* Nothing reaches a new group: its own chain is all there is. */
		FOR_EACH_REF(g, r, watch, {
			(void)watch;
			h = SL_MAX(h, chain_height(grp, r, NULL, NULL, &loop));
		})
		h++;
	} else {
		h = chain_height(grp, slot, slot, g, &loop);
		if (loop)
			return pl_err(pl, SL_FAIL_GROUP_LOOP, err, err_size, -ELOOP,
				      "group %u: its buckets would reach the group itself (loop)",
				      gs->group_id);
		/* Groups above it get longer chains too. */
		for (unsigned i = 0; i < grp->n && slot->n_forwarders + slot->n_watchers > 0; i++)
			h = SL_MAX(h, chain_height(grp, grp->slots[i], slot, g, &loop));
	}
	if (h > SL_GROUP_CHAIN_MAX)
		return pl_err(pl, SL_FAIL_GROUP_CHAINING, err, err_size, -EOPNOTSUPP,
			      "group %u: a chain of %u groups (at most %u)", gs->group_id, h,
			      SL_GROUP_CHAIN_MAX);
	return 0;
}

/*
 * Liveness (spec 5.6.1; pipeline.h).  The flags workers read are
 * recomputed whole on every change; with no group watched (the usual case)
 * there is nothing to do.  @force: even so (a body about to be published
 * watches groups whose flags may be old).
 */
static bool
group_live(struct sl_pipeline *pl, struct pl_group_slot *s)
{
	const struct pl_group *g = s->body;
	bool live = false;

	if (s->walk == pl->groups->walk)
		return s->walk_value;
	s->walk = pl->groups->walk;
	for (unsigned b = 0; b < g->n_buckets && !live; b++) {
		const struct pl_bucket *pb = &g->buckets[b];
		if (g->type == SL_GROUP_SELECT)
			live = pb->weight > 0;
		else if (g->type != SL_GROUP_FF)
			live = true; /* watches nothing: live, as in Open vSwitch */
		else
			live = (pb->watch_port != SL_PORT_ANY && pl->port_up[pb->watch_port]) ||
			       (pb->watch_slot != NULL && group_live(pl, pb->watch_slot));
	}
	s->walk_value = live;
	__atomic_store_n(&s->live, live, __ATOMIC_RELAXED);
	return live;
}

static void
liveness_update(struct sl_pipeline *pl, bool force)
{
	struct pl_groups *grp = pl->groups;

	if (grp->n_watching == 0 && !force)
		return;
	walk_begin(grp);
	for (unsigned i = 0; i < grp->n; i++)
		group_live(pl, grp->slots[i]);
}

void
pl_groups_liveness(struct sl_pipeline *pl)
{
	liveness_update(pl, false);
}

/* Does body @g watch any group? */
static bool
body_watches(const struct pl_group *g)
{
	for (unsigned b = 0; b < g->n_buckets; b++)
		if (g->buckets[b].watch_slot != NULL)
			return true;
	return false;
}

int
sl_pipeline_group_add(struct sl_pipeline *pl, const struct sl_group_spec *gs, char *err,
		      size_t err_size)
{
	struct pl_groups *grp = pl->groups;
	struct pl_group_slot *slot;
	struct pl_group *body = NULL;
	bool found;
	unsigned pos;
	int rc;

	pl->fail = SL_FAIL_NONE;
	pos = slot_pos(grp, gs->group_id, &found);
	if (found)
		return pl_err(pl, SL_FAIL_GROUP_EXISTS, err, err_size, -EEXIST,
			      "group %u already exists", gs->group_id);
	if (grp->n >= GROUPS_MAX)
		return pl_err(pl, SL_FAIL_TOO_MANY_GROUPS, err, err_size, -ENOSPC,
			      "too many groups (%u)", GROUPS_MAX);
	rc = body_build(pl, gs, &body, err, err_size);
	if (rc == 0)
		rc = chain_check(pl, NULL, gs, body, err, err_size);
	if (rc < 0) {
		body_free(body);
		return rc;
	}
	if (grp->n == grp->cap) {
		unsigned cap = grp->cap ? grp->cap * 2 : 16;
		struct pl_group_slot **n = realloc(grp->slots, cap * sizeof(*n));
		if (n == NULL) {
			body_free(body);
			return pl_err(pl, SL_FAIL_NOMEM, err, err_size, -ENOMEM, "out of memory");
		}
		grp->slots = n;
		grp->cap = cap;
	}
	slot = calloc(1, sizeof(*slot));
	if (slot == NULL) {
		body_free(body);
		return pl_err(pl, SL_FAIL_NOMEM, err, err_size, -ENOMEM, "out of memory");
	}
	slot->id = gs->group_id;
	slot->body = body;
	slot->created_tsc = sl_pipeline_tsc();
	memmove(&grp->slots[pos + 1], &grp->slots[pos], (grp->n - pos) * sizeof(grp->slots[0]));
	grp->slots[pos] = slot;
	grp->n++;
	body_refs_count(grp, body, +1);
	/* Before a flow can reach it: the groups it watches must have current flags. */
	liveness_update(pl, body_watches(body));
	return 0;
}

int
sl_pipeline_group_modify(struct sl_pipeline *pl, const struct sl_group_spec *gs, char *err,
			 size_t err_size)
{
	struct pl_group_slot *slot;
	struct pl_group *body = NULL, *old;
	int rc;

	pl->fail = SL_FAIL_NONE;
	slot = pl_group_find(pl, gs->group_id);
	if (slot == NULL)
		return pl_err(pl, SL_FAIL_UNKNOWN_GROUP, err, err_size, -ENOENT,
			      "group %u does not exist", gs->group_id);
	rc = body_build(pl, gs, &body, err, err_size);
	if (rc == 0)
		rc = chain_check(pl, slot, gs, body, err, err_size);
	if (rc < 0) {
		body_free(body);
		return rc;
	}
	/* The groups the new body watches must have current flags before workers see it. */
	if (body_watches(body))
		liveness_update(pl, true);
	old = slot->body;
	__atomic_store_n(&slot->body, body, __ATOMIC_RELEASE);
	body_refs_count(pl->groups, old, -1);
	body_refs_count(pl->groups, body, +1);
	retire(pl, old, true);
	liveness_update(pl, false);
	return 0;
}

/* @all: every group goes, so the references between them need no counting. */
static void
group_del_one(struct sl_pipeline *pl, unsigned pos, bool all)
{
	struct pl_groups *grp = pl->groups;
	struct pl_group_slot *slot = grp->slots[pos];
	struct sl_flow_filter flt;

	/* Flows naming the group go first (spec 6.5: they are removed too). */
	sl_flow_filter_init(&flt);
	flt.out_group = slot->id;
	sl_pipeline_flow_del(pl, &flt, SL_FLOW_REMOVED_GROUP_DELETE);
	memmove(&grp->slots[pos], &grp->slots[pos + 1], (grp->n - pos - 1) * sizeof(grp->slots[0]));
	grp->n--;
	if (!all)
		body_refs_count(grp, slot->body, -1);
	retire(pl, slot->body, true);
	retire(pl, slot, false);
}

int
sl_pipeline_group_del(struct sl_pipeline *pl, uint32_t group_id)
{
	struct pl_groups *grp = pl->groups;
	int n = 0;
	bool found;

	pl->fail = SL_FAIL_NONE;
	if (group_id == SL_GROUP_ID_ALL) {
		while (grp->n > 0) {
			group_del_one(pl, grp->n - 1, true);
			n++;
		}
		grp->n_watching = 0;
		return n;
	}
	unsigned pos = slot_pos(grp, group_id, &found);
	if (!found)
		return 0;
	/*
	 * Spec: OFPGMFC_CHAINED_GROUP.  Open vSwitch deletes it anyway and the
	 * chaining buckets find no group; here their pointers would dangle.
	 */
	if (grp->slots[pos]->n_forwarders + grp->slots[pos]->n_watchers > 0) {
		pl->fail = SL_FAIL_CHAINED_GROUP;
		return -EBUSY;
	}
	group_del_one(pl, pos, false);
	liveness_update(pl, false);
	return 1;
}

int
sl_pipeline_group_get(const struct sl_pipeline *pl, uint32_t group_id, struct sl_group_spec *gs,
		      struct sl_group_stats *st)
{
	bool found;
	unsigned pos = slot_pos(pl->groups, group_id, &found);
	const struct pl_group_slot *slot;
	const struct pl_group *g;

	if (!found)
		return -ENOENT;
	slot = pl->groups->slots[pos];
	g = slot->body;
	if (gs != NULL) {
		memset(gs, 0, offsetof(struct sl_group_spec, buckets));
		gs->group_id = slot->id;
		gs->type = g->type;
		gs->n_buckets = g->n_buckets;
		for (unsigned b = 0; b < g->n_buckets; b++) {
			struct sl_bucket_spec *bs = &gs->buckets[b];
			bs->weight = g->buckets[b].weight;
			bs->watch_port = g->buckets[b].watch_port;
			bs->watch_group = g->buckets[b].watch_group;
			bs->n_actions = g->buckets[b].n_actions;
			if (bs->n_actions > 0) /* a bucket without actions has none allocated */
				memcpy(bs->actions, g->buckets[b].actions,
				       bs->n_actions * sizeof(bs->actions[0]));
		}
	}
	if (st != NULL) {
		memset(st, 0, sizeof(*st));
		st->ref_count = slot->ref_count + slot->n_forwarders; /* spec: flows or groups */
		st->n_packets = slot->n_packets;
		st->n_bytes = slot->n_bytes;
		st->created_tsc = slot->created_tsc;
		st->n_buckets = g->n_buckets;
		for (unsigned b = 0; b < g->n_buckets; b++) {
			st->bucket_packets[b] = g->buckets[b].n_packets;
			st->bucket_bytes[b] = g->buckets[b].n_bytes;
		}
	}
	return 0;
}

unsigned
sl_pipeline_group_count(const struct sl_pipeline *pl)
{
	return pl->groups->n;
}

unsigned
sl_pipeline_group_ids(const struct sl_pipeline *pl, unsigned start, uint32_t *ids, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = start; i < pl->groups->n && n < max; i++)
		ids[n++] = pl->groups->slots[i]->id;
	return n;
}
