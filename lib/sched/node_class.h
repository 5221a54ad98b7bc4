/* node_class.h - node classes of a heterogeneous GPU cluster, from the
 * nodes themselves: the GPU type of the node's gres, its GPU count, the
 * interconnect recorded for its GPUs (gres.conf Links=) and its features;
 * or from the admin's saturn_node_classes setting, which names classes and
 * groups nodes into them. Also the two request rules that follow from
 * classes: a --constraint feature expression checked against a node's
 * features, and the typed GRES string a task is released with
 * ("gres:gpu:a100:2").
 * Plain C, no Slurm symbol, nothing allocated except by
 * saturn_class_rules_parse, nothing printed; unit-tested in
 * tests/sched/test_node_class.c.
 */
#ifndef SATURN_NODE_CLASS_H
#define SATURN_NODE_CLASS_H

#include <stddef.h>

#include "error.h"

/* Longest GPU type list ("a100" or, on a node with several types,
 * "a100,h100"), node feature list, class name and --constraint the
 * snapshot keeps, in bytes without the NUL. */
#define SATURN_GPU_TYPE_MAX 63
#define SATURN_FEATURES_MAX 255
#define SATURN_CLASS_NAME_MAX 63
#define SATURN_CONSTRAINT_MAX 255

/* Interconnect between a node's GPUs, from its gres Links= counts. */
#define SATURN_LINK_UNKNOWN "" /* no Links= recorded */
#define SATURN_LINK_NVLINK "nvlink" /* some pair of GPUs linked */
#define SATURN_LINK_PCIE "pcie" /* Links= recorded, no pair linked */

/* The name of the class a node belongs to when no rule of the admin's
 * names one: TYPE "x" GPUS ["-" LINK] ["+" FEATURE ...], where TYPE is the
 * node's GPU type list with ',' as '+' ("gpu" when untyped), LINK its
 * interconnect (omitted when unknown) and the features those of the node
 * (comma-separated) that are not already its GPU type or interconnect,
 * in the order given, e.g. "a100x4-pcie", "h100x8-nvlink+ib",
 * "gpux2". Characters outside [A-Za-z0-9._+-] become '_'; a name longer
 * than len - 1 is cut. Nodes of one name have the same GPU type(s), count,
 * interconnect and features. buf gets "" when len is too small (< 8). */
void saturn_node_class_derive(char *buf, size_t len, const char *gpu_types, int gpus,
			      const char *link, const char *features);

/* The admin's classes: saturn_node_classes=NAME:MATCH[+MATCH...][;NAME:...]
 * (a semicolon list, since SchedulerParameters splits on commas). A node
 * belongs to the first class one of whose MATCH words equals its GPU type
 * (any of them), one of its features or its name; a node no rule matches
 * gets its derived class. NAME and MATCH: 1 to SATURN_CLASS_NAME_MAX
 * characters from [A-Za-z0-9._-]; at most SATURN_CLASS_RULES_MAX rules,
 * SATURN_CLASS_MATCH_MAX words each. */
#define SATURN_CLASS_RULES_MAX 32
#define SATURN_CLASS_MATCH_MAX 16

typedef struct saturn_class_rules saturn_class_rules_t;

/* Parse text (NULL or "" = no rules: a valid empty set). Returns the rules
 * (free with saturn_class_rules_free) or NULL with err naming the bad part
 * ("saturn_node_classes: 'fast' has no ':MATCH'") or ENOMEM. */
saturn_class_rules_t *saturn_class_rules_parse(const char *text, saturn_error_t *err);

/* Whether k may stand as a class name in a file name (a class's own
 * profile NAME@CLASS.json, records and script copies): 1 to
 * SATURN_CLASS_NAME_MAX characters of [A-Za-z0-9._+-], not starting with
 * '.'. 1 or 0; k may be NULL (0). */
int saturn_class_name_ok(const char *k);

/* Free; NULL is allowed. */
void saturn_class_rules_free(saturn_class_rules_t *r);

/* Number of rules (0 for NULL). */
int saturn_class_rules_count(const saturn_class_rules_t *r);

/* The class of a node: the name of the first rule that matches it (r may
 * be NULL: none does), else the name derived from its GPU types, count
 * and interconnect (saturn_node_class_derive without the features: a
 * cluster's many feature sets would make as many classes and profiler
 * jobs; a --constraint splits classes by features inside the planner
 * problem only).
 * Written into buf[len]. Returns 1 when a rule named it, 0 when derived. */
int saturn_node_class(const saturn_class_rules_t *r, const char *node_name,
		      const char *gpu_types, int gpus, const char *link, const char *features,
		      char *buf, size_t len);

/* Whether a node with the comma-separated features satisfies a Slurm
 * --constraint expression: feature names joined by '&' or ',' (and) and
 * '|' (or; '&' binds tighter), as Slurm evaluates them. Returns 1 when it
 * does, 0 when it does not, -1 when the expression uses what this reader
 * does not evaluate (brackets, parentheses, counts "*N", "!", node
 * change features) or is malformed; expr NULL or "" is 1 (no constraint). */
int saturn_constraint_match(const char *expr, const char *features);

/* Whether one GPU type is among a node's comma-separated GPU types: 1 or 0.
 * type NULL or "" (the job asked for no type) is always 1. */
int saturn_gpu_type_match(const char *type, const char *gpu_types);

/* The GRES a task is released with: PREFIX"gpu:TYPE:N", or PREFIX"gpu:N"
 * when type is NULL or "". prefix is the form of the Slurm release the
 * caller runs in: "gres:" (up to 23.02) or "gres/" (23.11 on; the plugin's
 * SATURN_TRES_GRES_PREFIX). The type is the one the user asked for, else
 * the node's only GPU type (saturn_release_type). Returns 0, or -1 when it
 * does not fit into buf[len], gpus < 1 or prefix is neither (buf then ""). */
int saturn_gres_string(char *buf, size_t len, const char *prefix, const char *type, int gpus);

/* The GPU type to release a task with on a node: the type the user asked
 * for (req_type, when not "") or else the node's single GPU type; NULL when
 * the node's GPUs are untyped or of several types and the user asked for
 * none (an untyped request then lets Slurm pick any of them). */
const char *saturn_release_type(const char *req_type, const char *node_gpu_types);

#endif /* SATURN_NODE_CLASS_H */
