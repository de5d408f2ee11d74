/* libFuzzer harness for the AMDGPU readers: the bytes are what a HIP
 * program might hand the runtime or a user might give `ntop instrument`
 * (bundle, compressed bundle, code object, host ELF), and, separately, a
 * metadata note (msgpack), and as llvm-objdump text for the disassembly
 * reader (then emitted as assembly for every function). Every failure must say why; a tree that reads
 * must write back and read again. Seed corpus: tests/corpus/amdgpu. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/amdgpu/amdgpu_asm.h"
#include "engine/amdgpu/amdgpu_co.h"
#include "engine/amdgpu/amdgpu_disasm.h"
#include "engine/amdgpu/amdgpu_image.h"
#include "engine/amdgpu/amdgpu_msgpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_objects(const uint8_t *p, size_t n)
{
	struct amdgpu_objects o;
	char *cause = NULL;
	if (amdgpu_image_objects(p, n, &o, &cause) < 0) {
		if (!cause)
			abort();
		free(cause);
		return;
	}
	for (int i = 0; i < o.n; i++) {
		struct amdgpu_co co;
		if (amdgpu_co_open(o.v[i].data, o.v[i].size, &co, &cause) < 0) {
			if (!cause)
				abort();
			free(cause);
			cause = NULL;
			continue;
		}
		for (int k = 0; k < co.n; k++) {
			if (amdgpu_co_check_kernel(&co, &co.k[k], &cause) < 0 && !cause)
				abort();
			free(cause);
			cause = NULL;
		}
		uint32_t off;
		if (co.n && amdgpu_meta_append_buffer(&co.meta, co.k[0].meta->symbol, "m", &off, &cause) < 0 && !cause)
			abort();
		free(cause);
		cause = NULL;
		amdgpu_co_done(&co);
	}
	amdgpu_image_objects_done(&o);
}

static void fuzz_msgpack(const uint8_t *p, size_t n)
{
	struct msgpack_node root;
	char *cause = NULL;
	if (msgpack_read(p, n, &root, &cause) < 0) {
		if (!cause)
			abort();
		free(cause);
		return;
	}
	uint8_t *out = NULL;
	size_t len = 0;
	struct msgpack_node again;
	if (msgpack_write(&root, &out, &len, NULL) < 0 || msgpack_read(out, len, &again, NULL) < 0)
		abort(); /* whatever reads must write and read back */
	msgpack_free(&again);
	msgpack_free(&root);
	free(out);
}

static void fuzz_disasm(const uint8_t *p, size_t n)
{
	char *text = malloc(n + 1);
	if (!text)
		return;
	memcpy(text, p, n);
	text[n] = 0;
	struct amdgpu_disasm d = { 0 };
	char *cause = NULL;
	if (amdgpu_disasm_parse(text, &d, &cause) == 0) {
		for (int i = 0; i < d.n; i++) {
			char *a = amdgpu_asm_text(&d.f[i], d.f[i].n, NULL, AMDGPU_ASM_WORDS);
			free(a);
			amdgpu_asm_movable(&d.f[i], d.f[i].n, NULL);
		}
	} else if (!cause) {
		abort();
	}
	amdgpu_disasm_done(&d);
	free(cause);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	uint8_t *p = malloc(size); /* exact size: ASan sees reads past the end */
	if (!p)
		return 0;
	memcpy(p, data, size);
	fuzz_objects(p, size);
	fuzz_msgpack(p, size);
	fuzz_disasm(p, size);
	free(p);
	return 0;
}
