/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bcrypt_hash.c: prints the bcrypt hash ($2b$) of a password, for the basic_auth_users of a test's
 * web config (as htpasswd -nbB would).
 */
#include <crypt.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	const char *setting, *hash;
	unsigned long cost = argc > 2 ? strtoul(argv[2], NULL, 10) : 5; /* cheap: tests hash and check many */

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bcrypt_hash PASSWORD [COST]\n");
		return 2;
	}
	if (!(setting = crypt_gensalt("$2b$", cost, NULL, 0)) || !(hash = crypt(argv[1], setting)) || hash[0] != '$') {
		perror("bcrypt_hash: crypt");
		return 1;
	}
	puts(hash);
	return 0;
}
