/* warm.c: placeholder until written. */
#include "cmd/common.h"
int cmd_warm(int argc, char **argv) { (void)argc; (void)argv; return 1; }
