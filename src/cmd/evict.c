/* evict.c: placeholder until written. */
#include "cmd/common.h"
int cmd_evict(int argc, char **argv) { (void)argc; (void)argv; return 1; }
