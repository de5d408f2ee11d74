/* libFuzzer harness for the probe path a user's file takes: TOML parse,
 * schema load, verify. Inputs are arbitrary bytes; the TOML reader also sees
 * them whole (NULs included), the probe loader up to the first NUL.
 *   build-fuzz/bin/fuzz_toml -max_total_time=60 tests/corpus/toml */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/probe/probe.h"
#include "common/toml.h"
#include "engine/probe/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	char *cause = NULL;
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;

	/* Every failure must say why: a NULL cause aborts. */
	struct toml_node *root = NULL;
	if (toml_parse(text, size, "fuzz.toml", &root, &cause) == 0)
		toml_free(root);
	else if (!cause)
		abort();
	free(cause);
	cause = NULL;

	struct probe *p = NULL;
	if (probe_load_string(text, "fuzz.toml", &p, &cause) == 0) {
		if (verify_probe(p, &cause) < 0 && !cause)
			abort();
		probe_free(p);
	} else if (!cause) {
		abort();
	}
	free(cause);
	free(text);
	return 0;
}
