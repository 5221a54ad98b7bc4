# tests/cli/local.mk - shell tests of the saturn program
TESTS += \
	cli/help.sh \
	cli/bad-input.sh \
	cli/plan.sh \
	cli/plan-objective.sh \
	cli/plan-profile.sh
EXTRA_DIST += \
	cli/common.sh \
	cli/help.sh \
	cli/bad-input.sh \
	cli/plan.sh \
	cli/plan-objective.sh \
	cli/plan-profile.sh
