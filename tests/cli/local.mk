# tests/cli/local.mk - shell tests of the saturn program
