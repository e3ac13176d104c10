/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http_auth.c: export's basic-auth password checks: answers remembered under an HMAC key, bcrypt on
 * one thread, queues bounded.
 */
#include "http/http_auth.h"

#include <crypt.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/dl.h"
#include "common/util.h"
#include "http/web_config.h"

/* gnutls, which libmicrohttpd loads anyway: its HMAC-SHA256 names the remembered checks. */
static DLSYM_POINTER(gnutls_hmac_fast);
static void *libgnutls;

#define DIGEST_LEN 32       /* HMAC-SHA256 */
#define ACCEPTED_SLOTS 64   /* right passwords: only who knows one can add to them */
#define REFUSED_SLOTS 256   /* wrong ones: anyone can, so they are kept apart and never push a right one out */
#define BLAMED_CLIENTS 256  /* clients whose wrong passwords bcrypt found lately */
#define BLAME_HALF_LIFE_NS (10 * 1000000000ull)

struct slot {
	unsigned char digest[DIGEST_LEN];
	uint64_t used;              /* the tick it was last put or found at; 0: empty */
};

struct user {
	char *name, *hash;
};

/* A client's wrong passwords, as bcrypt found them, halved every BLAME_HALF_LIFE_NS. */
struct blame {
	unsigned char client[AUTH_CLIENT_KEY];
	size_t client_len;
	unsigned wrong;
	uint64_t used;
};

struct auth_check {
	struct auth_check *next;    /* in the queue */
	unsigned char digest[DIGEST_LEN];
	unsigned char client[AUTH_CLIENT_KEY];
	size_t client_len;
	char hash[64];              /* copied: the thread may outlive the config */
	char *password;             /* wiped once checked */
	bool known_user;
	enum auth_answer answer;    /* AUTH_PENDING until decided */
	bool released;              /* by the caller, while it ran: the thread frees it */
	bool notified;
	void (*done)(void *context);
	void *context;
};

struct auth {
	pthread_mutex_t lock;
	pthread_cond_t wake;        /* for the thread: a check queued, or stopping */
	pthread_cond_t quiet;       /* for auth_stop: no done() being called */
	pthread_t thread;
	bool stopping;
	bool detached, exited;      /* auth_free has let the thread go; the thread has ended */
	unsigned notifying;         /* done() calls in progress */
	struct auth_check *head, *tail, *running;
	unsigned pending;           /* queued and running */
	struct auth_counts counts;
	unsigned char key[32];
	uint64_t tick;
	struct slot accepted[ACCEPTED_SLOTS], refused[REFUSED_SLOTS];
	struct blame blamed[BLAMED_CLIENTS];
	uint64_t halved_ns;         /* when the blame was last halved */
	struct user *users;
	size_t user_count;
	struct crypt_data data;     /* the thread's */
};

/* HMAC(key, user NUL hash NUL password): what a check is remembered by. */
static int digest(const struct auth *auth, const char *user, const char *hash, const char *password,
		  unsigned char out[DIGEST_LEN])
{
	size_t user_len = strlen(user) + 1, hash_len = strlen(hash) + 1, password_len = strlen(password);
	char *text = malloc(user_len + hash_len + password_len);
	int rc;

	if (!text)
		return -1;
	memcpy(text, user, user_len);
	memcpy(text + user_len, hash, hash_len);
	memcpy(text + user_len + hash_len, password, password_len);
	rc = sym_gnutls_hmac_fast(GNUTLS_MAC_SHA256, auth->key, sizeof(auth->key), text,
				  user_len + hash_len + password_len, out);
	explicit_bzero(text, user_len + hash_len + password_len);
	free(text);
	return rc == 0 ? 0 : -1;
}

/* The remembered answer, or AUTH_PENDING. Under the lock. */
static enum auth_answer recall(struct auth *auth, const unsigned char digest[DIGEST_LEN])
{
	for (unsigned i = 0; i < ACCEPTED_SLOTS; i++)
		if (auth->accepted[i].used && !memcmp(auth->accepted[i].digest, digest, DIGEST_LEN))
			return auth->accepted[i].used = ++auth->tick, AUTH_ACCEPTED;
	for (unsigned i = 0; i < REFUSED_SLOTS; i++)
		if (auth->refused[i].used && !memcmp(auth->refused[i].digest, digest, DIGEST_LEN))
			return auth->refused[i].used = ++auth->tick, AUTH_REFUSED;
	return AUTH_PENDING;
}

/* Kept in place of the least recently used of its kind. Under the lock. */
static void remember(struct auth *auth, const unsigned char digest[DIGEST_LEN], enum auth_answer answer)
{
	struct slot *slots = answer == AUTH_ACCEPTED ? auth->accepted : auth->refused, *oldest = slots;
	unsigned count = answer == AUTH_ACCEPTED ? ACCEPTED_SLOTS : REFUSED_SLOTS;

	for (unsigned i = 1; i < count; i++)
		if (slots[i].used < oldest->used)
			oldest = &slots[i];
	memcpy(oldest->digest, digest, DIGEST_LEN);
	oldest->used = ++auth->tick;
}

static void check_free(struct auth_check *check)
{
	if (check->password) {
		explicit_bzero(check->password, strlen(check->password));
		free(check->password);
	}
	free(check);
}

/*
 * A check decided (off the queue, not running): its answer kept for its caller, who is told unless
 * gone. Under the lock.
 */
static void conclude(struct auth *auth, struct auth_check *check, enum auth_answer answer)
{
	void (*done)(void *context) = check->done;
	void *context = check->context;

	check->answer = answer;
	auth->counts.refused += answer == AUTH_REFUSED;
	auth->counts.busy += answer == AUTH_BUSY;
	explicit_bzero(check->password, strlen(check->password));
	if (check->released) {
		check_free(check);
		return;
	}
	if (auth->stopping || !done)
		return;
	check->notified = true;
	auth->notifying++;
	pthread_mutex_unlock(&auth->lock);
	done(context); /* check may be released and freed from here on */
	pthread_mutex_lock(&auth->lock);
	if (!--auth->notifying)
		pthread_cond_broadcast(&auth->quiet);
}

/* Takes a queued check off the queue. Under the lock. */
static void unlink_check(struct auth *auth, struct auth_check *check)
{
	struct auth_check **at = &auth->head, *before = NULL;

	while (*at && *at != check)
		before = *at, at = &(*at)->next;
	if (!*at)
		return;
	*at = check->next;
	if (auth->tail == check)
		auth->tail = before;
	check->next = NULL;
}

/* The same, a check that will not run. */
static void unqueue(struct auth *auth, struct auth_check *check)
{
	unlink_check(auth, check);
	auth->pending--;
}

static bool same_client(const struct auth_check *check, const void *client, size_t client_len)
{
	return check->client_len == client_len && !memcmp(check->client, client, client_len);
}

/* The client's blame entry (a new one in place of the least used when create), or NULL. Under the lock. */
static struct blame *blame_of(struct auth *auth, const void *client, size_t client_len, bool create)
{
	uint64_t now = monotonic_ns(), periods = (now - auth->halved_ns) / BLAME_HALF_LIFE_NS;
	struct blame *oldest = auth->blamed;

	if (periods) { /* wrong passwords of long ago weigh less */
		for (unsigned i = 0; i < BLAMED_CLIENTS; i++)
			auth->blamed[i].wrong >>= periods > 31 ? 31 : periods;
		auth->halved_ns += periods * BLAME_HALF_LIFE_NS;
	}
	for (unsigned i = 0; i < BLAMED_CLIENTS; i++) {
		struct blame *b = &auth->blamed[i];

		if (b->used && b->client_len == client_len && !memcmp(b->client, client, client_len))
			return b->used = ++auth->tick, b;
		if (b->used < oldest->used)
			oldest = b;
	}
	if (!create)
		return NULL;
	memcpy(oldest->client, client, client_len);
	oldest->client_len = client_len;
	oldest->wrong = 0;
	oldest->used = ++auth->tick;
	return oldest;
}

static unsigned blame(struct auth *auth, const void *client, size_t client_len)
{
	const struct blame *b = blame_of(auth, client, client_len, false);

	return b ? b->wrong : 0;
}

/* Checks of this client queued, and running. Under the lock. */
static unsigned client_pending(const struct auth *auth, const void *client, size_t client_len)
{
	unsigned n = auth->running && same_client(auth->running, client, client_len);

	for (const struct auth_check *c = auth->head; c; c = c->next)
		n += same_client(c, client, client_len);
	return n;
}

/*
 * The queue is full, and a client with mine checks of its own and wrong passwords of its own
 * asks for one more. Who gives it a place: the queued check of the client most to blame for
 * wrong passwords lately, or of one as much to blame with more checks queued (mine + 2), the newest,
 * which is then answered AUTH_BUSY. So the clients that flood the queue make room for one that
 * has not (a scraper with a new password, from another address). NULL when none is worse than
 * the newcomer. Under the lock.
 */
static struct auth_check *make_room(struct auth *auth, unsigned mine, unsigned wrong)
{
	struct auth_check *victim = NULL;
	unsigned worst_wrong = wrong, worst_count = mine + 2;

	for (struct auth_check *c = auth->head; c; c = c->next) {
		unsigned theirs = 0, their_wrong = blame(auth, c->client, c->client_len);

		for (struct auth_check *o = auth->head; o; o = o->next)
			theirs += same_client(o, c->client, c->client_len);
		if (their_wrong > worst_wrong || (their_wrong == worst_wrong && theirs >= worst_count)) {
			worst_wrong = their_wrong;
			worst_count = theirs;
			victim = c; /* the last of the worst: the newest */
		}
	}
	return victim;
}

/* The check to run next: the oldest of the client least to blame. Under the lock. */
static struct auth_check *next_check(struct auth *auth)
{
	struct auth_check *best = auth->head;
	unsigned best_wrong = best ? blame(auth, best->client, best->client_len) : 0;

	for (struct auth_check *c = best ? best->next : NULL; c && best_wrong; c = c->next) {
		unsigned wrong = blame(auth, c->client, c->client_len);

		if (wrong < best_wrong)
			best = c, best_wrong = wrong;
	}
	return best;
}

static void destroy(struct auth *auth)
{
	while (auth->head) {
		struct auth_check *next = auth->head->next;

		check_free(auth->head);
		auth->head = next;
	}
	for (size_t i = 0; i < auth->user_count; i++) {
		free(auth->users[i].name);
		free(auth->users[i].hash);
	}
	free(auth->users);
	pthread_mutex_destroy(&auth->lock);
	pthread_cond_destroy(&auth->wake);
	pthread_cond_destroy(&auth->quiet);
	explicit_bzero(auth, sizeof(*auth));
	free(auth);
}

/* The thread that runs bcrypt, one check at a time (next_check's). */
static void *checker(void *arg)
{
	struct auth *auth = arg;
	bool detached;

	pthread_mutex_lock(&auth->lock);
	for (;;) {
		struct auth_check *check;
		enum auth_answer answer;

		while (!auth->stopping && !auth->head)
			pthread_cond_wait(&auth->wake, &auth->lock);
		if (auth->stopping)
			break;
		check = auth->running = next_check(auth);
		unlink_check(auth, check);
		/* The same user and password may have been decided while this one waited. */
		if ((answer = recall(auth, check->digest)) == AUTH_PENDING) {
			bool matches;

			pthread_mutex_unlock(&auth->lock);
			matches = web_config_bcrypt_matches(check->password, check->hash, &auth->data);
			pthread_mutex_lock(&auth->lock);
			auth->counts.bcrypt++;
			answer = check->known_user && matches ? AUTH_ACCEPTED : AUTH_REFUSED;
			remember(auth, check->digest, answer);
			if (answer == AUTH_REFUSED)
				blame_of(auth, check->client, check->client_len, true)->wrong++;
		}
		auth->running = NULL;
		auth->pending--;
		conclude(auth, check, answer);
	}
	detached = auth->detached;
	auth->exited = true;
	pthread_mutex_unlock(&auth->lock);
	if (detached)
		destroy(auth);
	return NULL;
}

struct auth *auth_new(const struct web_config *config, char *why, size_t why_len)
{
	struct auth *auth;
	sigset_t stop_signals, old;
	int err;

	if (dl_open_many(&libgnutls, GNUTLS_SONAME, why, why_len, DLSYM_ARG(gnutls_hmac_fast), NULL) != 0)
		return NULL;
	if (!(auth = calloc(1, sizeof(*auth))) ||
	    !(auth->users = calloc(config->user_count + 1, sizeof(*auth->users)))) {
		free(auth);
		snprintf(why, why_len, "%s", strerror(ENOMEM));
		return NULL;
	}
	pthread_mutex_init(&auth->lock, NULL);
	pthread_cond_init(&auth->wake, NULL);
	pthread_cond_init(&auth->quiet, NULL);
	auth->halved_ns = monotonic_ns();
	for (size_t i = 0; i < config->user_count; i++, auth->user_count++)
		if (!(auth->users[i].name = strdup(config->users[i].name)) ||
		    !(auth->users[i].hash = strdup(config->users[i].hash))) {
			free(auth->users[i].name);
			destroy(auth);
			snprintf(why, why_len, "%s", strerror(ENOMEM));
			return NULL;
		}
	if (getrandom(auth->key, sizeof(auth->key), 0) != sizeof(auth->key)) {
		snprintf(why, why_len, "getrandom: %s", strerror(errno));
		destroy(auth);
		return NULL;
	}
	/* SIGINT and SIGTERM go to the thread that serves, whose poll they cut short. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop_signals, &old);
	err = pthread_create(&auth->thread, NULL, checker, auth);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		pthread_setname_np(auth->thread, "iolens-bcrypt"); /* as ps -L and tests see it */
	if (err) {
		snprintf(why, why_len, "a thread for bcrypt: %s", strerror(err));
		destroy(auth);
		return NULL;
	}
	return auth;
}

enum auth_answer auth_verify(struct auth *auth, const char *user, const char *password, const void *client,
			     size_t client_len, void (*done)(void *context), void *context, struct auth_check **check)
{
	struct auth_check *c = NULL, *victim = NULL;
	const struct user *found = NULL;
	unsigned char key[DIGEST_LEN];
	enum auth_answer answer;
	const char *hash;
	unsigned mine;

	*check = NULL;
	if (!auth->user_count)
		return AUTH_REFUSED;
	for (size_t i = 0; i < auth->user_count && !found; i++)
		if (!strcmp(auth->users[i].name, user))
			found = &auth->users[i];
	/* An unknown user is checked against a real hash: the time taken does not tell which users exist. */
	hash = found ? found->hash : auth->users[0].hash;
	if (client_len > AUTH_CLIENT_KEY)
		client_len = AUTH_CLIENT_KEY;
	if (digest(auth, user, hash, password, key) != 0)
		return AUTH_BUSY;
	pthread_mutex_lock(&auth->lock);
	mine = client_pending(auth, client, client_len);
	if (auth->stopping) {
		answer = AUTH_BUSY;
	} else if ((answer = recall(auth, key)) != AUTH_PENDING) {
		auth->counts.refused += answer == AUTH_REFUSED;
	} else if (mine >= AUTH_MAX_PER_CLIENT) {
		answer = AUTH_BUSY_CLIENT;
	} else if (auth->pending >= AUTH_MAX_PENDING &&
		   !(victim = make_room(auth, mine, blame(auth, client, client_len)))) {
		answer = AUTH_BUSY;
	} else if (!(c = calloc(1, sizeof(*c))) || !(c->password = strdup(password))) {
		free(c);
		answer = AUTH_BUSY;
	} else {
		memcpy(c->digest, key, DIGEST_LEN);
		memcpy(c->client, client, client_len);
		c->client_len = client_len;
		snprintf(c->hash, sizeof(c->hash), "%s", hash);
		c->known_user = found;
		c->answer = AUTH_PENDING;
		c->done = done;
		c->context = context;
		if (auth->tail)
			auth->tail->next = c;
		else
			auth->head = c;
		auth->tail = c;
		auth->pending++;
		pthread_cond_signal(&auth->wake);
		*check = c;
		if (victim) {
			unqueue(auth, victim);
			conclude(auth, victim, AUTH_BUSY);
		}
	}
	auth->counts.busy += answer == AUTH_BUSY || answer == AUTH_BUSY_CLIENT;
	pthread_mutex_unlock(&auth->lock);
	explicit_bzero(key, sizeof(key));
	return answer;
}

enum auth_answer auth_check_answer(struct auth *auth, const struct auth_check *check)
{
	enum auth_answer answer;

	pthread_mutex_lock(&auth->lock);
	answer = check->answer;
	pthread_mutex_unlock(&auth->lock);
	return answer;
}

bool auth_check_notified(struct auth *auth, const struct auth_check *check)
{
	bool notified;

	pthread_mutex_lock(&auth->lock);
	notified = check->notified;
	pthread_mutex_unlock(&auth->lock);
	return notified;
}

void auth_check_release(struct auth *auth, struct auth_check *check)
{
	pthread_mutex_lock(&auth->lock);
	if (check == auth->running) {
		check->released = true; /* the thread frees it */
	} else {
		if (check->answer == AUTH_PENDING)
			unqueue(auth, check);
		check_free(check);
	}
	pthread_mutex_unlock(&auth->lock);
}

void auth_get_counts(struct auth *auth, struct auth_counts *counts)
{
	pthread_mutex_lock(&auth->lock);
	*counts = auth->counts;
	counts->pending = auth->pending;
	pthread_mutex_unlock(&auth->lock);
}

void auth_stop(struct auth *auth)
{
	pthread_mutex_lock(&auth->lock);
	auth->stopping = true;
	pthread_cond_broadcast(&auth->wake);
	while (auth->notifying)
		pthread_cond_wait(&auth->quiet, &auth->lock);
	pthread_mutex_unlock(&auth->lock);
}

void auth_free(struct auth *auth)
{
	pthread_t thread;
	bool exited;

	if (!auth)
		return;
	auth_stop(auth);
	/*
	 * The thread is not waited for: it may be in a bcrypt (0.2 s at cost 12, more on a slower
	 * machine), or not be scheduled at all. Until it has ended, what is left is its to free.
	 */
	pthread_mutex_lock(&auth->lock);
	thread = auth->thread;
	exited = auth->exited;
	auth->detached = !exited;
	pthread_mutex_unlock(&auth->lock);
	if (!exited) {
		pthread_detach(thread);
		return;
	}
	pthread_join(thread, NULL);
	destroy(auth);
}
