/* libFuzzer harness for the image parsers: the bytes are an image the hook
 * might receive (PTX, fatbin, cubin, host ELF). Always passes the real size:
 * size 0 means "trust the headers", which no fuzzer input may ask for. Seed
 * corpus: tests/corpus/images. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/image/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_image_entries(const uint8_t *p, size_t n)
{
	struct image_entry *e = NULL;
	int cnt = 0;
	char *cause = NULL;
	if (image_fatbin_entries(p, n, &e, &cnt, &cause) == 0) {
		for (int i = 0; i < cnt; i++) {
			uint8_t *out = NULL;
			size_t len = 0;
			if (image_entry_data(&e[i], &out, &len, &cause) == 0)
				free(out);
			else if (!cause)
				abort();
		}
		free(e);
	} else if (!cause) {
		abort(); /* failures must say why */
	}
	free(cause);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	/* An exact-size copy: the sanitizer then catches any read past the end. */
	uint8_t *p = malloc(size);
	if (!p)
		return 0;
	memcpy(p, data, size);
	size_t real = 0;
	image_classify(p, size, &real);
	if (real > size)
		abort(); /* with a size given, the image never grows */
	fuzz_image_entries(p, size);
	char *cause = NULL, *ptx = NULL;
	size_t len = 0;
	static const int sms[] = { 75, 90 };
	for (size_t i = 0; i < sizeof sms / sizeof sms[0]; i++) {
		if (image_pick_ptx(p, size, sms[i], &ptx, &len, &cause) == 0)
			free(ptx);
		else if (!cause)
			abort();
	}
	char **names = NULL;
	int n = 0;
	if (image_kernel_names(p, size, &names, &n, &cause) == 0)
		image_free_names(names, n);
	else if (!cause)
		abort();
	free(cause);
	free(p);
	return 0;
}
