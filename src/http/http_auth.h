/* SPDX-License-Identifier: GPL-2.0-or-later */
/* http_auth.h: export's basic-auth password checks: answers remembered, bcrypt on a thread of its own, bounded. */
#ifndef IOLENS_HTTP_AUTH_H
#define IOLENS_HTTP_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct web_config;

/*
 * What a password check says. A check bcrypt has decided is remembered (a keyed digest of
 * user, hash and password, not the password): a scraper's next requests are answered at once
 * and never wait behind others' checks. Checks not remembered queue for the one thread that
 * runs bcrypt, AUTH_MAX_PENDING at most, and AUTH_MAX_PER_CLIENT from one client; more are
 * refused at once rather than queued.
 */
enum auth_answer {
	AUTH_ACCEPTED,
	AUTH_REFUSED,         /* a wrong password, or a user that is not there */
	AUTH_PENDING,         /* queued: done() is called once it is decided */
	AUTH_BUSY_CLIENT,     /* AUTH_MAX_PER_CLIENT checks of this client are queued already */
	AUTH_BUSY,            /* AUTH_MAX_PENDING are */
};

#define AUTH_MAX_PENDING 16u
#define AUTH_MAX_PER_CLIENT 4u
#define AUTH_CLIENT_KEY 16u   /* bytes that name a client (its address) */

struct auth_counts {
	uint64_t bcrypt;          /* passwords checked with bcrypt */
	uint64_t refused;         /* AUTH_REFUSED answers, remembered or not */
	uint64_t busy;            /* AUTH_BUSY_CLIENT and AUTH_BUSY answers */
	unsigned pending;         /* checks queued or running now */
};

struct auth;
struct auth_check;

/*
 * The checker of config's basic_auth_users (copied: config may go first), its thread started:
 * NULL with why. libcrypt must have been opened (web_config_parse does it).
 */
struct auth *auth_new(const struct web_config *config, char *why, size_t why_len);

/*
 * user and password, from the client named by client (at most AUTH_CLIENT_KEY bytes). Remembered
 * answers, and the refusals, at once. AUTH_PENDING: *check is the check, and done(context) is
 * called from the checking thread once it is decided (never after auth_stop has returned); the
 * caller then reads auth_check_answer and releases it.
 */
enum auth_answer auth_verify(struct auth *auth, const char *user, const char *password, const void *client,
			     size_t client_len, void (*done)(void *context), void *context, struct auth_check **check);
/* A check's answer: AUTH_PENDING until it is decided. */
enum auth_answer auth_check_answer(struct auth *auth, const struct auth_check *check);
/* Whether done() has been called for it. */
bool auth_check_notified(struct auth *auth, const struct auth_check *check);
/* The caller is done with check (answered, or gone): one still queued is not run. */
void auth_check_release(struct auth *auth, struct auth_check *check);

void auth_get_counts(struct auth *auth, struct auth_counts *counts);

/* No done() is called once it returns, and no queued check is run; a bcrypt running is not waited for. */
void auth_stop(struct auth *auth);
/* After auth_stop and every check released. A bcrypt still running finishes on its own, then frees what is left. */
void auth_free(struct auth *auth);

#endif
