/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procfs_net.c: /proc/net/dev, and sockets by protocol and state from /proc/net/{tcp,udp,raw}[6],
 * unix and sockstat[6].
 */
#include "collect/procfs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collect/procfs_internal.h"
#include "common/util.h"

/* ---- /proc/net/dev ----------------------------------------------------------------- */

/* "  eth0: rx_bytes rx_packets errs drop fifo frame compressed multicast tx_bytes tx_packets errs drop ..." */
static int netdev_line(struct span line, const char *colon, struct netdev_stats *dev)
{
	struct span name = procfs_trim((struct span){line.start, colon});
	struct span rest = {colon + 1, line.end}, word;
	uint64_t column[12];
	unsigned count = 0;

	/* Device names have no blank (dev_valid_name) and fit IFNAMSIZ. */
	if (span_length(name) == 0 || span_length(name) >= sizeof(dev->name) ||
	    memchr(name.start, ' ', span_length(name)) || memchr(name.start, '\t', span_length(name)))
		return -EINVAL;
	/* Old kernels print "%6s:%8lu": a long count runs into the colon, so split there, not at blanks. */
	while (count < 12 && procfs_next_word(&rest, &word)) {
		if (!procfs_parse_u64(word, 10, &column[count]))
			return -EINVAL;
		count++;
	}
	if (count < 12)
		return -EINVAL;
	procfs_copy_name(dev->name, sizeof(dev->name), name);
	dev->rx_bytes = column[0];
	dev->rx_packets = column[1];
	dev->rx_errs = column[2];
	dev->rx_drop = column[3];
	dev->tx_bytes = column[8];
	dev->tx_packets = column[9];
	dev->tx_errs = column[10];
	dev->tx_drop = column[11];
	return 0;
}

int netdev_parse(const char *text, size_t len, struct netdev *out)
{
	const char *cursor = text, *end = text + len;
	unsigned capacity = 0;
	struct span line;

	*out = (struct netdev){0};
	while (procfs_next_line(&cursor, end, &line)) {
		const char *colon = memchr(line.start, ':', span_length(line));

		if (!colon)
			continue; /* the two header lines */
		if (out->count == capacity) {
			capacity = capacity ? capacity * 2 : 16;
			out->dev = xrealloc(out->dev, capacity * sizeof(*out->dev));
		}
		if (netdev_line(line, colon, &out->dev[out->count]) != 0) {
			netdev_free(out);
			return -EINVAL;
		}
		out->count++;
	}
	return 0;
}

int netdev_read(struct netdev *out)
{
	static struct sysroot_file file = SYSROOT_FILE("/proc/net/dev");
	const char *text;
	size_t len;
	int rc = procfs_read_hot(&file, &text, &len);

	if (rc != 0) {
		*out = (struct netdev){0};
		return rc;
	}
	return netdev_parse(text, len, out);
}

void netdev_free(struct netdev *net)
{
	free(net->dev);
	net->dev = NULL;
	net->count = 0;
}

/* ---- /proc/net/{tcp,udp,raw}[6] ---------------------------------------------------- */

/* TCP states as include/net/tcp_states.h numbers them (the "st" column, in hex). */
enum {
	TCP_ESTABLISHED = 1,
	TCP_SYN_SENT,
	TCP_SYN_RECV,
	TCP_FIN_WAIT1,
	TCP_FIN_WAIT2,
	TCP_TIME_WAIT,
	TCP_CLOSE,
	TCP_CLOSE_WAIT,
	TCP_LAST_ACK,
	TCP_LISTEN,
	TCP_CLOSING,
	TCP_NEW_SYN_RECV,
	TCP_STATE_COUNT = 256
};

/*
 * Counts the sockets of an inet table by state: the header, then per socket
 * "sl: local_address rem_address st ..." (IPv6 addresses are longer, the columns the same).
 */
static int inet_states(const char *text, size_t len, uint64_t states[TCP_STATE_COUNT])
{
	const char *cursor = text, *end = text + len;
	struct span line, slot, local, remote, state;
	uint64_t st;

	memset(states, 0, TCP_STATE_COUNT * sizeof(states[0]));
	if (!procfs_next_line(&cursor, end, &line) || !memmem(line.start, span_length(line), "local_address", 13))
		return -EINVAL;
	while (procfs_next_line(&cursor, end, &line)) {
		if (!procfs_next_word(&line, &slot))
			continue;
		if (slot.end[-1] != ':' || !procfs_parse_u64((struct span){slot.start, slot.end - 1}, 10, &st) ||
		    !procfs_next_word(&line, &local) || !memchr(local.start, ':', span_length(local)) ||
		    !procfs_next_word(&line, &remote) || !memchr(remote.start, ':', span_length(remote)) ||
		    !procfs_next_word(&line, &state) || span_length(state) != 2 || !procfs_parse_u64(state, 16, &st))
			return -EINVAL;
		states[st]++;
	}
	return 0;
}

int sockets_parse_tcp(const char *text, size_t len, struct sockets *out)
{
	uint64_t states[TCP_STATE_COUNT];
	int rc = inet_states(text, len, states);

	if (rc != 0)
		return rc;
	out->tcp_listen += states[TCP_LISTEN];
	out->tcp_established += states[TCP_ESTABLISHED];
	/* Request sockets show as SYN_RECV; NEW_SYN_RECV is their internal state, counted should a kernel show it. */
	out->tcp_syn += states[TCP_SYN_SENT] + states[TCP_SYN_RECV] + states[TCP_NEW_SYN_RECV];
	out->tcp_time_wait += states[TCP_TIME_WAIT];
	out->tcp_close += states[TCP_FIN_WAIT1] + states[TCP_FIN_WAIT2] + states[TCP_CLOSE] + states[TCP_CLOSE_WAIT] +
			  states[TCP_LAST_ACK] + states[TCP_CLOSING];
	return 0;
}

int sockets_parse_udp(const char *text, size_t len, struct sockets *out)
{
	uint64_t states[TCP_STATE_COUNT];
	int rc = inet_states(text, len, states);

	if (rc != 0)
		return rc;
	/* UDP borrows the TCP numbers: CLOSE when only bound, ESTABLISHED once connected. */
	out->udp_listen += states[TCP_CLOSE];
	out->udp_active += states[TCP_ESTABLISHED];
	return 0;
}

int sockets_parse_raw(const char *text, size_t len, struct sockets *out)
{
	uint64_t states[TCP_STATE_COUNT], count = 0;
	int rc = inet_states(text, len, states);

	if (rc != 0)
		return rc;
	for (unsigned i = 0; i < TCP_STATE_COUNT; i++)
		count += states[i];
	out->raw += count;
	return 0;
}

/* ---- /proc/net/unix ---------------------------------------------------------------- */

#define UNIX_ACCEPTCON 0x10000 /* __SO_ACCEPTCON in Flags: a listening socket */
#define UNIX_CONNECTED 3       /* SS_CONNECTED in St */

/* "Num: RefCount Protocol Flags Type St Inode [Path]", all hex but the inode; false when the line is not that. */
static bool unix_line(struct span line, uint64_t *flags, uint64_t *type, uint64_t *state)
{
	struct span word[7];
	uint64_t number;

	for (unsigned i = 0; i < 7; i++)
		if (!procfs_next_word(&line, &word[i]))
			return false;
	return word[0].end[-1] == ':' && procfs_parse_u64((struct span){word[0].start, word[0].end - 1}, 16, &number) &&
	       procfs_parse_u64(word[1], 16, &number) && procfs_parse_u64(word[2], 16, &number) &&
	       procfs_parse_u64(word[3], 16, flags) && procfs_parse_u64(word[4], 16, type) &&
	       procfs_parse_u64(word[5], 16, state) && procfs_parse_u64(word[6], 10, &number);
}

int sockets_parse_unix(const char *text, size_t len, struct sockets *out)
{
	const char *cursor = text, *end = text + len;
	struct sockets count = {0};
	struct span line, first;
	uint64_t flags, type, state;

	if (!procfs_next_line(&cursor, end, &line) || !procfs_next_word(&line, &first) || !span_equals(first, "Num"))
		return -EINVAL;
	while (procfs_next_line(&cursor, end, &line)) {
		/* A path may hold a newline: what follows it is no socket, and passed over. */
		if (!unix_line(line, &flags, &type, &state))
			continue;
		if (type == 1)
			count.unix_stream++;
		else if (type == 2)
			count.unix_datagram++;
		else if (type == 5)
			count.unix_seqpacket++;
		if (flags & UNIX_ACCEPTCON)
			count.unix_listen++;
		if (state == UNIX_CONNECTED)
			count.unix_active++;
	}
	out->unix_stream += count.unix_stream;
	out->unix_datagram += count.unix_datagram;
	out->unix_seqpacket += count.unix_seqpacket;
	out->unix_listen += count.unix_listen;
	out->unix_active += count.unix_active;
	return 0;
}

/* ---- /proc/net/sockstat[6] --------------------------------------------------------- */

/* The value that follows `name` in "KEY: name value name value ...". */
static int sockstat_value(struct span line, const char *name, uint64_t *value)
{
	struct span word, number;

	while (procfs_next_word(&line, &word)) {
		if (!procfs_next_word(&line, &number))
			return -EINVAL;
		if (span_equals(word, name))
			return procfs_parse_u64(number, 10, value) ? 0 : -EINVAL;
	}
	return -EINVAL;
}

int sockets_parse_sockstat(const char *text, size_t len, struct sockets *out)
{
	static const struct {
		const char *key, *name;
		size_t offset;
	} lines[] = {
		{"sockets:", "used", offsetof(struct sockets, used)},
		{"TCP:", "inuse", offsetof(struct sockets, tcp_inuse)},
		{"TCP6:", "inuse", offsetof(struct sockets, tcp_inuse)},
		{"UDP:", "inuse", offsetof(struct sockets, udp_inuse)},
		{"UDP6:", "inuse", offsetof(struct sockets, udp_inuse)},
		{"RAW:", "inuse", offsetof(struct sockets, raw_inuse)},
		{"RAW6:", "inuse", offsetof(struct sockets, raw_inuse)},
		{"FRAG:", "inuse", offsetof(struct sockets, frag_inuse)},
		{"FRAG6:", "inuse", offsetof(struct sockets, frag_inuse)},
	};
	const char *cursor = text, *end = text + len;
	struct sockets sum = {0};
	struct span line, key;
	bool known = false;
	uint64_t value;

	while (procfs_next_line(&cursor, end, &line)) {
		if (!procfs_next_word(&line, &key))
			continue;
		for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
			if (!span_equals(key, lines[i].key))
				continue;
			if (sockstat_value(line, lines[i].name, &value) != 0)
				return -EINVAL;
			*(uint64_t *)((char *)&sum + lines[i].offset) += value;
			known = true;
		}
	}
	if (!known)
		return -EINVAL;
	out->used += sum.used;
	out->tcp_inuse += sum.tcp_inuse;
	out->udp_inuse += sum.udp_inuse;
	out->raw_inuse += sum.raw_inuse;
	out->frag_inuse += sum.frag_inuse;
	return 0;
}

/* ---- all of them ------------------------------------------------------------------- */

/* Keeps the first error; a missing file is none. */
static void note_error(int *first, int rc)
{
	if (rc != 0 && rc != -ENOENT && *first == 0)
		*first = rc;
}

int sockets_read_some(struct sockets *out, unsigned which)
{
	static struct sysroot_file tables[] = {
		SYSROOT_FILE("/proc/net/tcp"), SYSROOT_FILE("/proc/net/tcp6"), SYSROOT_FILE("/proc/net/udp"),
		SYSROOT_FILE("/proc/net/udp6"), SYSROOT_FILE("/proc/net/raw"), SYSROOT_FILE("/proc/net/raw6"),
		SYSROOT_FILE("/proc/net/unix"),
	};
	static const unsigned table_kind[] = {
		SOCKETS_TCP, SOCKETS_TCP, SOCKETS_UDP, SOCKETS_UDP, SOCKETS_RAW, SOCKETS_RAW, SOCKETS_UNIX,
	};
	static int (*const parsers[])(const char *, size_t, struct sockets *) = {
		sockets_parse_tcp, sockets_parse_tcp, sockets_parse_udp, sockets_parse_udp,
		sockets_parse_raw, sockets_parse_raw, sockets_parse_unix,
	};
	static struct sysroot_file sockstat = SYSROOT_FILE("/proc/net/sockstat");
	static struct sysroot_file sockstat6 = SYSROOT_FILE("/proc/net/sockstat6");
	const char *text;
	size_t len;
	int first_error = 0, rc;

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (!(which & table_kind[i]))
			continue;
		rc = procfs_read_hot(&tables[i], &text, &len);
		if (rc == 0)
			rc = parsers[i](text, len, out);
		note_error(&first_error, rc);
	}
	if (which & SOCKETS_STAT) {
		struct sockets totals = {0};

		/* The totals are the kernel's own counts: without the file they are unknown, not zero. */
		rc = procfs_read_hot(&sockstat, &text, &len);
		if (rc == 0)
			rc = sockets_parse_sockstat(text, len, &totals);
		if (rc == 0) {
			int rc6 = procfs_read_hot(&sockstat6, &text, &len);

			if (rc6 == 0)
				rc6 = sockets_parse_sockstat(text, len, &totals);
			note_error(&first_error, rc6);
		} else {
			totals.used = totals.tcp_inuse = totals.udp_inuse = PROCFS_UNKNOWN;
			totals.raw_inuse = totals.frag_inuse = PROCFS_UNKNOWN;
			note_error(&first_error, rc);
		}
		out->used = totals.used;
		out->tcp_inuse = totals.tcp_inuse;
		out->udp_inuse = totals.udp_inuse;
		out->raw_inuse = totals.raw_inuse;
		out->frag_inuse = totals.frag_inuse;
	}
	return first_error;
}

int sockets_read(struct sockets *out)
{
	*out = (struct sockets){0};
	return sockets_read_some(out, SOCKETS_TCP | SOCKETS_UDP | SOCKETS_RAW | SOCKETS_UNIX | SOCKETS_STAT);
}
