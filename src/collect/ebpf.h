/* ebpf.h: what the eBPF collectors share: libbpf kept quiet, and why a program cannot count here, in words a user can act on. */
#ifndef IOLENS_EBPF_H
#define IOLENS_EBPF_H

struct bpf_object;

/* libbpf's messages off stderr; the last warning is kept for ebpf_why. Call before opening. */
void ebpf_quiet(void);

/*
 * Why the object could not be loaded or attached (err: the -errno libbpf returned), with the
 * fix: not root or without CAP_BPF and CAP_PERFMON, no BTF, a tracepoint this kernel does not
 * have, kernel lockdown, or what the kernel and libbpf said. The text lives until the next call.
 */
const char *ebpf_why(struct bpf_object *object, int err, const char *step);

#endif
