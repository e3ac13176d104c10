/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_http_auth.c: export's password checks: answers remembered (one bcrypt per user and
 * password), the bounds per client and in all, who makes room and who is checked first, and that
 * nothing is run or told after auth_stop.
 */
#include "unit.h"

#include <crypt.h>
#include <pthread.h>
#include <sched.h>

#include "http/http_auth.h"
#include "http/web_config.h"

/* Checks decided, in order; done() of a check made to block holds the bcrypt thread until let go. */
struct log {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	unsigned decided;
	char order[64][8];
	bool blocked, let_go;
};

struct ticket {
	struct log *log;
	char name[8];
	bool block;
	struct auth_check *check;
	enum auth_answer answer;  /* what auth_verify said */
};

static struct log log_ = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, { "" }, false, false };

static void done(void *context)
{
	struct ticket *t = context;

	pthread_mutex_lock(&t->log->lock);
	snprintf(t->log->order[t->log->decided++ % 64], 8, "%s", t->name);
	if (t->block) {
		t->log->blocked = true;
		pthread_cond_broadcast(&t->log->changed);
		while (!t->log->let_go)
			pthread_cond_wait(&t->log->changed, &t->log->lock);
	}
	pthread_cond_broadcast(&t->log->changed);
	pthread_mutex_unlock(&t->log->lock);
}

static void wait_decided(unsigned n)
{
	pthread_mutex_lock(&log_.lock);
	while (log_.decided < n)
		pthread_cond_wait(&log_.changed, &log_.lock);
	pthread_mutex_unlock(&log_.lock);
}

static void wait_blocked(void)
{
	pthread_mutex_lock(&log_.lock);
	while (!log_.blocked)
		pthread_cond_wait(&log_.changed, &log_.lock);
	pthread_mutex_unlock(&log_.lock);
}

static void let_go(void)
{
	pthread_mutex_lock(&log_.lock);
	log_.let_go = true;
	pthread_cond_broadcast(&log_.changed);
	pthread_mutex_unlock(&log_.lock);
}

static void reset_log(void)
{
	pthread_mutex_lock(&log_.lock);
	log_.decided = 0;
	log_.blocked = log_.let_go = false;
	pthread_mutex_unlock(&log_.lock);
}

static struct web_config config;
static char alice_hash[128], bob_hash[128];

/* alice: "open sesame", bob: "bob secret", at bcrypt's least cost. */
static int setup(void **state)
{
	char text[512], why[256];

	(void)state;
	snprintf(alice_hash, sizeof(alice_hash), "%s", crypt("open sesame", crypt_gensalt("$2b$", 4, NULL, 0)));
	snprintf(bob_hash, sizeof(bob_hash), "%s", crypt("bob secret", crypt_gensalt("$2b$", 4, NULL, 0)));
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: '%s'\n  bob: '%s'\n", alice_hash, bob_hash);
	if (web_config_parse(text, strlen(text), &config, why, sizeof(why)) != 0) {
		fprintf(stderr, "%s\n", why);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	web_config_free(&config);
	return 0;
}

/* auth_verify for a ticket of client (its name, for the bounds) */
static enum auth_answer ask(struct auth *auth, struct ticket *t, const char *name, const char *client, const char *user,
			    const char *password)
{
	t->log = &log_;
	snprintf(t->name, sizeof(t->name), "%s", name);
	return t->answer = auth_verify(auth, user, password, client, strlen(client), done, t, &t->check);
}

static void counts(struct auth *auth, uint64_t bcrypt, uint64_t refused, uint64_t busy, unsigned pending)
{
	struct auth_counts c;

	auth_get_counts(auth, &c);
	if (c.bcrypt != bcrypt || c.refused != refused || c.busy != busy || c.pending != pending)
		fail_msg("bcrypt %llu refused %llu busy %llu pending %u; expected %llu %llu %llu %u",
			 (unsigned long long)c.bcrypt, (unsigned long long)c.refused, (unsigned long long)c.busy,
			 c.pending, (unsigned long long)bcrypt, (unsigned long long)refused, (unsigned long long)busy,
			 pending);
}

/* Decided by bcrypt (its done() called): the answer, the check released. */
static enum auth_answer decided(struct auth *auth, struct ticket *t, unsigned n)
{
	enum auth_answer answer;

	assert_int_equal(t->answer, AUTH_PENDING);
	wait_decided(n);
	answer = auth_check_answer(auth, t->check);
	auth_check_release(auth, t->check);
	return answer;
}

/* The bcrypt thread held in x's done() (a wrong password from X: X is to blame) until let_go(). */
static void hold(struct auth *auth, struct ticket *x)
{
	reset_log();
	x->block = true;
	ask(auth, x, "X", "X", "alice", "wrong x");
	wait_blocked();
}

static void test_remembered(void **state)
{
	char why[256];
	struct auth *auth = auth_new(&config, why, sizeof(why));
	struct ticket t[8] = {0};

	(void)state;
	assert_non_null(auth);
	reset_log();
	ask(auth, &t[0], "a1", "A", "alice", "open sesame");
	assert_int_equal(decided(auth, &t[0], 1), AUTH_ACCEPTED);
	for (int i = 0; i < 10; i++) /* a scraper's next requests: at once, no bcrypt */
		assert_int_equal(ask(auth, &t[1], "a", "A", "alice", "open sesame"), AUTH_ACCEPTED);
	counts(auth, 1, 0, 0, 0);
	ask(auth, &t[1], "w", "B", "alice", "sesame");
	assert_int_equal(decided(auth, &t[1], 2), AUTH_REFUSED);
	for (int i = 0; i < 5; i++) /* the same wrong password: refused at once */
		assert_int_equal(ask(auth, &t[2], "w", "B", "alice", "sesame"), AUTH_REFUSED);
	counts(auth, 2, 6, 0, 0);
	ask(auth, &t[2], "b", "B", "bob", "open sesame"); /* alice's password, for bob: remembered with its user */
	assert_int_equal(decided(auth, &t[2], 3), AUTH_REFUSED);
	ask(auth, &t[3], "c", "B", "carol", "open sesame"); /* no such user: a bcrypt all the same */
	assert_int_equal(decided(auth, &t[3], 4), AUTH_REFUSED);
	ask(auth, &t[4], "b", "B", "bob", "bob secret");
	assert_int_equal(decided(auth, &t[4], 5), AUTH_ACCEPTED);
	counts(auth, 5, 8, 0, 0);
	assert_int_equal(ask(auth, &t[5], "a", "C", "alice", "open sesame"), AUTH_ACCEPTED); /* from any client */
	auth_free(auth);
}

/*
 * With the bcrypt thread held (in the done() of a check from X, refused: X is to blame), the
 * bounds are exact: 4 checks per client, 16 in all; a newcomer not to blame takes the place of
 * the newest check of the client with the most; one to blame gets none. Let go, the thread
 * checks the oldest of the clients least to blame first.
 */
static void test_bounds(void **state)
{
	static const char *const clients[] = { "A", "B", "C", "D" };
	char why[256];
	struct auth *auth = auth_new(&config, why, sizeof(why));
	struct ticket x = {0}, t[4][4] = {0}, e = {0}, f = {0}, more = {0}, blamed = {0};
	const char *expected[] = { "A1", "B1", "C1", "D1", "E1", "F1", "A2", "B2" };

	(void)state;
	assert_non_null(auth);
	hold(auth, &x);
	for (int c = 0; c < 4; c++)
		for (int i = 0; i < 4; i++) {
			char name[8];

			snprintf(name, sizeof(name), "%s%d", clients[c], i + 1);
			t[c][i].block = false;
			assert_int_equal(ask(auth, &t[c][i], name, clients[c], "alice", name), AUTH_PENDING);
		}
	more.block = false;
	assert_int_equal(ask(auth, &more, "A5", "A", "alice", "A5"), AUTH_BUSY_CLIENT); /* 4 of A's wait */
	counts(auth, 1, 1, 1, 16);
	e.block = false;
	assert_int_equal(ask(auth, &e, "E1", "E", "alice", "E1"), AUTH_PENDING); /* in place of D4 */
	assert_int_equal(auth_check_answer(auth, t[3][3].check), AUTH_BUSY);
	blamed.block = false;
	assert_int_equal(ask(auth, &blamed, "X2", "X", "alice", "X2"), AUTH_BUSY); /* X is to blame: no room */
	f.block = false;
	assert_int_equal(ask(auth, &f, "F1", "F", "alice", "F1"), AUTH_PENDING); /* in place of C4: D has 3 left */
	assert_int_equal(auth_check_answer(auth, t[2][3].check), AUTH_BUSY);
	counts(auth, 1, 1, 4, 16);
	let_go();
	wait_decided(1 + 2 + 16);
	for (unsigned i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
		assert_string_equal(log_.order[3 + i], expected[i]); /* after X, D4 and C4 (made room) */
	counts(auth, 17, 17, 4, 0);
	auth_check_release(auth, x.check);
	for (int c = 0; c < 4; c++)
		for (int i = 0; i < 4; i++)
			auth_check_release(auth, t[c][i].check);
	auth_check_release(auth, e.check);
	auth_check_release(auth, f.check);
	auth_free(auth);
}

/* The queue full of one check per client: a newcomer takes the place of the one client to blame, not of the others. */
static void test_blamed_make_room(void **state)
{
	char why[256];
	struct auth *auth = auth_new(&config, why, sizeof(why));
	struct ticket wrong = {0}, x = {0}, t[16] = {0}, g = {0}, h = {0};

	(void)state;
	assert_non_null(auth);
	reset_log();
	ask(auth, &wrong, "w", "A", "alice", "a wrong one");
	assert_int_equal(decided(auth, &wrong, 1), AUTH_REFUSED); /* A is to blame */
	hold(auth, &x);
	for (int i = 0; i < 16; i++) {
		char name[8];

		snprintf(name, sizeof(name), "%c", i ? 'a' + i : 'A');
		assert_int_equal(ask(auth, &t[i], name, name, "alice", name), AUTH_PENDING);
	}
	assert_int_equal(ask(auth, &g, "G", "G", "alice", "G"), AUTH_PENDING);
	assert_int_equal(auth_check_answer(auth, t[0].check), AUTH_BUSY); /* A's */
	assert_int_equal(ask(auth, &h, "H", "H", "alice", "H"), AUTH_BUSY); /* no one else to blame, none with 2 */
	let_go();
	wait_decided(1 + 1 + 16);
	counts(auth, 1 + 1 + 16, 1 + 1 + 16, 2, 0);
	auth_check_release(auth, x.check);
	auth_check_release(auth, g.check);
	for (int i = 0; i < 16; i++)
		auth_check_release(auth, t[i].check);
	auth_free(auth);
}

/*
 * A check queued for a password that is decided while it waits: no second bcrypt; one released
 * while queued: not run.
 */
static void test_queued(void **state)
{
	char why[256];
	struct auth *auth = auth_new(&config, why, sizeof(why));
	struct ticket x = {0}, same[2] = {0}, gone = {0}, last = {0};

	(void)state;
	assert_non_null(auth);
	hold(auth, &x);
	same[0].block = same[1].block = gone.block = last.block = false;
	ask(auth, &same[0], "s1", "A", "alice", "twice");
	ask(auth, &same[1], "s2", "B", "alice", "twice");
	ask(auth, &gone, "g", "C", "alice", "gone");
	auth_check_release(auth, gone.check); /* its connection closed */
	counts(auth, 1, 1, 0, 2);
	let_go();
	assert_int_equal(decided(auth, &same[0], 3), AUTH_REFUSED);
	assert_int_equal(decided(auth, &same[1], 3), AUTH_REFUSED);
	ask(auth, &last, "l", "C", "alice", "last");
	assert_int_equal(decided(auth, &last, 4), AUTH_REFUSED);
	counts(auth, 3, 4, 0, 0); /* X, "twice" once, "last"; not "gone" */
	auth_check_release(auth, x.check);
	auth_free(auth);
}

static void *stopper(void *auth)
{
	auth_stop(auth);
	return NULL;
}

/* auth_stop: waits for a done() in progress, then nothing queued runs and no one is told; new checks are refused. */
static void test_stop(void **state)
{
	char why[256];
	struct auth *auth = auth_new(&config, why, sizeof(why));
	struct ticket x = {0}, queued = {0}, after = {0}, probe = {0};
	pthread_t thread;

	(void)state;
	assert_non_null(auth);
	reset_log();
	probe.block = false;
	ask(auth, &probe, "p", "P", "alice", "open sesame");
	assert_int_equal(decided(auth, &probe, 1), AUTH_ACCEPTED);
	hold(auth, &x);
	queued.block = after.block = false;
	assert_int_equal(ask(auth, &queued, "q", "A", "alice", "queued"), AUTH_PENDING);
	assert_int_equal(pthread_create(&thread, NULL, stopper, auth), 0);
	while (ask(auth, &probe, "p", "P", "alice", "open sesame") == AUTH_ACCEPTED) /* until it is stopping */
		sched_yield();
	let_go();
	pthread_join(thread, NULL);
	assert_int_equal(ask(auth, &after, "a", "A", "alice", "after"), AUTH_BUSY);
	assert_int_equal(auth_check_answer(auth, queued.check), AUTH_PENDING);
	assert_false(auth_check_notified(auth, queued.check));
	assert_true(auth_check_notified(auth, x.check));
	assert_int_equal(log_.decided, 1);
	counts(auth, 2, 1, 2, 1); /* the probe's bcrypt; the probe and "after" busy */
	auth_check_release(auth, queued.check);
	auth_check_release(auth, x.check);
	auth_free(auth);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remembered),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_blamed_make_room),
		cmocka_unit_test(test_queued),
		cmocka_unit_test(test_stop),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
