/* (u32, u32) → u32 with 12-byte entries, any capacity, grown by half: the
 * stack tree's (parent, frame) → id (mirror.c), and flush_rows.c's rows.
 * 0 = absent. */
#ifndef MP_NODE_MAP_H
#define MP_NODE_MAP_H

#include <stddef.h>
#include <stdint.h>

struct node_map {
    struct node_entry { uint32_t parent, frame, id; } *e;     /* id 0 = empty */
    size_t cap, count;
};
uint32_t node_get(const struct node_map *m, uint32_t parent, uint32_t frame);
int node_put(struct node_map *m, uint32_t parent, uint32_t frame, uint32_t id);  /* a key not in the map yet */
int node_reserve(struct node_map *m, size_t more);      /* room for more entries */
void node_clear(struct node_map *m);
int node_map_validate(const struct node_map *m, char *why, size_t n);     /* the unit tests: 0, or -1 and why */

#endif
