/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * container_files.c: the runtimes' own files that name their containers (docker's config.v2.json,
 * podman's containers.json, the kubelet's log directories) and that say where those are (docker's
 * daemon.json, the directories the configurations name), parsed as the untrusted text they may be.
 */
#include "collect/container.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#define JSON_DEPTH 16 /* config.v2.json nests 4 deep, containers.json 3 */

bool container_name_valid(const char *name, size_t len)
{
	if (!len || len >= CONTAINER_NAME_SIZE)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-')))
			return false;
	}
	return true;
}

/* The JSON text as json-c's tree, its nesting bounded; NULL when it is not one whole JSON value. */
static struct json_object *parse_json(const char *text, size_t len)
{
	struct json_tokener *tokener;
	struct json_object *root;

	if (len > INT32_MAX || !(tokener = json_tokener_new_ex(JSON_DEPTH)))
		return NULL;
	root = json_tokener_parse_ex(tokener, text, (int)len);
	if (json_tokener_get_error(tokener) != json_tokener_success) {
		json_object_put(root);
		root = NULL;
	}
	json_tokener_free(tokener);
	return root;
}

/* A string member of an object: its bytes and length, or NULL. */
static const char *member_string(struct json_object *object, const char *key, size_t *len)
{
	struct json_object *value;

	if (!json_object_is_type(object, json_type_object) || !json_object_object_get_ex(object, key, &value) ||
	    !json_object_is_type(value, json_type_string))
		return NULL;
	*len = (size_t)json_object_get_string_len(value);
	return json_object_get_string(value);
}

static void copy_name(const char *name, size_t len, char *out, size_t size)
{
	size_t n = len < size ? len : size - 1;

	memcpy(out, name, n);
	out[n] = '\0';
}

bool container_docker_name(const char *json, size_t len, char *name, size_t size)
{
	struct json_object *root = parse_json(json, len);
	const char *value;
	size_t value_len = 0;
	bool ok = false;

	if (root && (value = member_string(root, "Name", &value_len)) && value_len > 1 && value[0] == '/' &&
	    container_name_valid(value + 1, value_len - 1) && value_len - 1 < size) {
		copy_name(value + 1, value_len - 1, name, size);
		ok = true;
	}
	json_object_put(root);
	return ok;
}

size_t container_podman_names(const char *json, size_t len, size_t max,
			      void (*found)(const char *id, const char *name, void *context), void *context)
{
	struct json_object *root = parse_json(json, len);
	size_t count = 0;

	if (root && json_object_is_type(root, json_type_array)) {
		size_t n = json_object_array_length(root);

		for (size_t i = 0; i < n && count < max; i++) {
			struct json_object *entry = json_object_array_get_idx(root, i), *names, *first;
			char id[CONTAINER_ID_SIZE], name[CONTAINER_NAME_SIZE];
			const char *text;
			size_t text_len;

			if (!(text = member_string(entry, "id", &text_len)) || !container_id_valid(text, text_len))
				continue;
			memcpy(id, text, text_len);
			id[text_len] = '\0';
			if (!json_object_object_get_ex(entry, "names", &names) ||
			    !json_object_is_type(names, json_type_array) || json_object_array_length(names) < 1 ||
			    !(first = json_object_array_get_idx(names, 0)) ||
			    !json_object_is_type(first, json_type_string))
				continue;
			text = json_object_get_string(first);
			text_len = (size_t)json_object_get_string_len(first);
			if (!container_name_valid(text, text_len))
				continue;
			copy_name(text, text_len, name, sizeof(name));
			found(id, name, context);
			count++;
		}
	}
	json_object_put(root);
	return count;
}

enum setting container_json_setting(const char *json, size_t len, const char *key, char *value, size_t size)
{
	struct json_object *root = parse_json(json, len), *member;
	enum setting said = SETTING_BAD;
	size_t value_len;

	if (size)
		value[0] = '\0';
	if (!root || !size || !json_object_is_type(root, json_type_object)) {
		json_object_put(root);
		return SETTING_BAD;
	}
	if (!json_object_object_get_ex(root, key, &member))
		said = SETTING_ABSENT;
	else if (json_object_is_type(member, json_type_string) &&
		 (value_len = (size_t)json_object_get_string_len(member)) < size &&
		 !memchr(json_object_get_string(member), '\0', value_len)) {
		memcpy(value, json_object_get_string(member), value_len);
		value[value_len] = '\0';
		said = SETTING_FOUND;
	}
	json_object_put(root);
	return said;
}

/* Appends len bytes of text to out (of size, used bytes in it): false when they do not fit. */
static bool append(char *out, size_t size, size_t *used, const char *text, size_t len)
{
	if (len >= size - *used)
		return false;
	memcpy(out + *used, text, len);
	*used += len;
	out[*used] = '\0';
	return true;
}

/* A byte of a variable's name: a letter, a digit or '_'. */
static bool name_byte(char c)
{
	return c == '_' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* Which of $UID, ${UID}, $HOME, ${HOME} text starts with (0 to 3; its length in len), or -1 (another, or none). */
static int variable(const char *text, size_t *len)
{
	static const char *const names[] = { "$UID", "${UID}", "$HOME", "${HOME}" };

	for (int n = 0; n < 4; n++) {
		*len = strlen(names[n]);
		/* $UID, not $UIDS: a bare name runs as far as its bytes do */
		if (!strncmp(text, names[n], *len) && (names[n][1] == '{' || !name_byte(text[*len])))
			return n;
	}
	return -1;
}

bool container_config_dir(const char *value, uint32_t uid, const char *home, char *out, size_t size)
{
	char uid_text[16];
	size_t used = 0, len;

	if (!size)
		return false;
	out[0] = '\0';
	snprintf(uid_text, sizeof(uid_text), "%u", (unsigned)uid);
	for (const char *at = value; *at; at += len) {
		const char *text = at;

		len = 1;
		if (*at == '$') {
			int n = variable(at, &len);

			/* another variable holds what the runtime's environment held, unknown here */
			if (n < 0 || (n >= 2 && (!home || home[0] != '/')))
				return false;
			text = n < 2 ? uid_text : home;
		} else if ((unsigned char)*at < 0x20 || *at == 0x7f) {
			return false;
		}
		if (!append(out, size, &used, text, text == at ? 1 : strlen(text)))
			return false;
	}
	if (out[0] != '/')
		return false;
	/* No ".." (it would lead out of the root the files are read under); no trailing '/' */
	for (const char *part = out; (part = strstr(part, "/..")); part += 3)
		if (part[3] == '/' || part[3] == '\0')
			return false;
	while (used > 1 && out[used - 1] == '/')
		out[--used] = '\0';
	return true;
}

/* Kubernetes's names: DNS labels and subdomains, lowercase letters, digits, '-' and '.' ("." not in a namespace). */
static bool dns_name(const char *text, size_t len, bool dots, size_t max)
{
	if (!len || len > max)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (dots && c == '.')))
			return false;
	}
	return true;
}

static bool take(const char *text, size_t len, char *out, size_t size)
{
	if (len >= size)
		return false;
	memcpy(out, text, len);
	out[len] = '\0';
	return true;
}

/* name split at its two underscores into three fields: false unless there are exactly two. */
static bool three_fields(const char *name, const char **field, size_t *len)
{
	const char *first = strchr(name, '_'), *second = first ? strchr(first + 1, '_') : NULL;

	if (!second || strchr(second + 1, '_'))
		return false;
	field[0] = name;
	len[0] = (size_t)(first - name);
	field[1] = first + 1;
	len[1] = (size_t)(second - first - 1);
	field[2] = second + 1;
	len[2] = strlen(second + 1);
	return true;
}

bool container_pod_dir_parse(const char *name, char *namespace_, size_t namespace_size, char *pod, size_t pod_size,
			     char *uid, size_t uid_size)
{
	const char *field[3];
	size_t len[3];

	if (!three_fields(name, field, len) || !dns_name(field[0], len[0], false, 63) ||
	    !dns_name(field[1], len[1], true, 253) || !dns_name(field[2], len[2], false, CONTAINER_POD_UID_SIZE - 1))
		return false;
	return take(field[0], len[0], namespace_, namespace_size) && take(field[1], len[1], pod, pod_size) &&
	       take(field[2], len[2], uid, uid_size);
}

bool container_log_name_parse(const char *name, char *pod, size_t pod_size, char *namespace_, size_t namespace_size,
			      char *container, size_t container_size, char *id, size_t id_size)
{
	const char *field[3];
	size_t len[3], tail = 1 + (CONTAINER_ID_SIZE - 1) + 4; /* "-ID.log" */

	if (!three_fields(name, field, len) || len[2] <= tail || memcmp(field[2] + len[2] - 4, ".log", 4) ||
	    field[2][len[2] - tail] != '-' || !container_id_valid(field[2] + len[2] - tail + 1, CONTAINER_ID_SIZE - 1))
		return false;
	len[2] -= tail;
	if (!dns_name(field[0], len[0], true, 253) || !dns_name(field[1], len[1], false, 63) ||
	    !dns_name(field[2], len[2], false, 63))
		return false;
	return take(field[0], len[0], pod, pod_size) && take(field[1], len[1], namespace_, namespace_size) &&
	       take(field[2], len[2], container, container_size) &&
	       take(field[2] + len[2] + 1, CONTAINER_ID_SIZE - 1, id, id_size);
}
