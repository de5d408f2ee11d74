/* GPU code images as the driver receives them: PTX text, a fatbin (wrapper
 * magic 0x466243B1 or container magic 0xBA55ED50, entries possibly LZ4- or
 * zstd-compressed), a cubin (ELF, e_machine EM_CUDA=190), or a host ELF
 * executable / shared library holding a .nv_fatbin section. */
#ifndef NTOP_IMAGE_H
#define NTOP_IMAGE_H
#include <stddef.h>
#include <stdint.h>

enum image_kind { IMAGE_UNKNOWN, IMAGE_PTX, IMAGE_FATBIN, IMAGE_CUBIN, IMAGE_HOST_ELF };

struct image_entry {
	int is_ptx;         /* 1 PTX, 0 ELF/SASS */
	int arch;           /* e.g. 75, 80, 90 */
	int arch_suffix_a;  /* 1 for sm_90a / compute_90a (arch-specific) */
	int arch_suffix_f;  /* 1 for sm_100f / compute_100f (family-specific) */
	int compressed;     /* 0 none, 1 LZ4, 2 zstd */
	int container;      /* index of the fatbin container holding it (0-based) */
	size_t stored_size; /* payload bytes in the image */
	size_t size;        /* uncompressed bytes */
	const uint8_t *payload; /* borrowed pointer into the image */
};

/* Classifies an image. `size` may be 0 when the caller has only a pointer (the
 * driver API gives none): the size is then derived from the format's own
 * headers (fatbin header, ELF section table, PTX NUL terminator). Every length
 * read from the image is bounds-checked against that size. `real_size` gets
 * the bytes at `image` that make up the image: for PTX the text without its
 * NUL, for a fatbin wrapper only the 24-byte wrapper (see image_resolve). */
enum image_kind image_classify(const void *image, size_t size, size_t *real_size);
/* The bytes the image consists of: a fatbin wrapper is followed to its
 * container (only when size is 0, i.e. a live in-process pointer, or when it
 * points inside [image, image+size)), and a size of 0 is derived from the
 * headers. Lets the hook copy an image it must keep after the app frees it. */
int image_resolve(const void *image, size_t size, const void **data, size_t *len, char **cause);
/* All entries of all fatbin containers inside the image (fatbin or host ELF:
 * its .nv_fatbin and __nv_relfatbin sections); a bare cubin or PTX text gives
 * one entry standing for the whole image (arch from e_flags / ".target").
 * *entries is malloc'd (NULL when *n is 0); payload pointers borrow the image. */
int image_fatbin_entries(const void *image, size_t size, struct image_entry **entries, int *n, char **cause);
/* Decompresses (or copies) one entry; PTX results are NUL-terminated and
 * `len` excludes the NUL and any trailing NUL padding. */
int image_entry_data(const struct image_entry *e, uint8_t **out, size_t *len, char **cause);
/* The PTX the engine should instrument for a device of compute capability
 * `sm` (e.g. 90): the highest PTX entry not above sm (an "a" entry only when
 * its arch equals sm, an "f" entry only within its major version; at equal
 * arch "a" before "f" before plain; then the first). A host ELF holds one
 * container per translation unit: this picks across all of them, so callers
 * that need one kernel's PTX choose among image_fatbin_entries themselves.
 * For IMAGE_PTX returns a copy. For a cubin or a fatbin without PTX fails
 * with a cause starting "SASS only". *len excludes the NUL. */
int image_pick_ptx(const void *image, size_t size, int sm, char **ptx, size_t *len, char **cause);
/* Does PTX text define kernel `name` (".entry name(")? */
int image_ptx_defines(const char *ptx, const char *name);
/* As image_pick_ptx, among the entries whose PTX defines `kernel` (a host
 * ELF or an -rdc fatbin holds one container per translation unit). Fails
 * with a cause starting "SASS only" when the image holds no PTX at all. */
int image_pick_kernel_ptx(const void *image, size_t size, int sm, const char *kernel, char **ptx, size_t *len,
			  char **cause);
/* The PTX of every other translation unit: per container, its best entry
 * for sm_`sm` (as image_pick_ptx ranks them), except containers whose PTX
 * defines `kernel`. For linking an -rdc kernel with the device functions it
 * calls elsewhere. *texts: malloc'd array of malloc'd NUL-terminated texts. */
int image_other_ptx(const void *image, size_t size, int sm, const char *kernel, char ***texts, int *n, char **cause);
/* Kernel (entry) names in a cubin, or in every ELF entry of a fatbin: lets the
 * hook list SASS-only kernels. Without ELF entries the `.entry` names of the
 * PTX are given. Mangled, deduplicated, in image order. malloc'd array of
 * malloc'd strings. */
int image_kernel_names(const void *image, size_t size, char ***names, int *n, char **cause);
void image_free_names(char **names, int n);
/* Writes "sm_90a", "compute_100f": the entry's arch as nvcc spells it. */
void image_entry_arch_name(const struct image_entry *e, char *buf, size_t len);

#endif
