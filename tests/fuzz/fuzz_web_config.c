/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_web_config.c: libFuzzer target for the --web.config.file parser (YAML through libyaml, then
 * the exporter-toolkit keys).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/web_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct web_config config;
	char why[256], priorities[128];

	if (web_config_parse((const char *)data, size, &config, why, sizeof(why)) == 0) {
		web_config_priorities(&config, priorities, sizeof(priorities));
		if (config.tls && (!config.cert_file == !config.cert || !config.key_file == !config.key))
			abort(); /* accepted TLS has one certificate and one key */
		for (size_t i = 0; i < config.user_count; i++)
			if (strlen(config.users[i].hash) != 60 || atoi(config.users[i].hash + 4) < 4 ||
			    atoi(config.users[i].hash + 4) > WEB_BCRYPT_MAX_COST)
				abort(); /* an accepted hash is bcrypt's, of a cost a scrape can pay */
	} else if (!memchr(why, '\0', sizeof(why)) || !why[0]) {
		abort(); /* a refusal says why */
	}
	web_config_free(&config);
	return 0;
}
