/* commands.h - the subcommands of `saturn`, one line each.
 *
 * SATURN_CMD(name, summary): `saturn NAME ...` calls
 * int cmd_NAME(int argc, char **argv) with argv[0] = "NAME" (see cli.h for
 * the exit status conventions). To add a subcommand, add its line here and
 * its file (cli/NAME.c) to saturn_SOURCES in cli/Makefile.am.
 */
SATURN_CMD(plan, "plan a batch offline: read saturn-problem/1, print the plan")
SATURN_CMD(status, "show the plan sched/saturn follows (its persisted state)")
SATURN_CMD(techniques, "list the parallelism techniques and where they come from")
SATURN_CMD(release, "admin: release every task sched/saturn holds (turning Saturn off)")
SATURN_CMD(replay, "run recorded scheduling cycles again; say whether they still decide the same")
