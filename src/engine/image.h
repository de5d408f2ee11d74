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
	int arch_suffix_a;  /* 1 for sm_90a / compute_90a */
	int compressed;     /* 0 none, 1 LZ4, 2 zstd */
	size_t stored_size; /* payload bytes in the image */
	size_t size;        /* uncompressed bytes */
	const uint8_t *payload; /* borrowed pointer into the image */
};

/* Classifies an image. `size` may be 0 when the caller has only a pointer (the
 * driver API gives none): the size is then derived from the format's own
 * headers (fatbin header, ELF section table, PTX NUL terminator). Every length
 * read from the image is bounds-checked against that size. */
enum image_kind image_classify(const void *image, size_t size, size_t *real_size);
/* All entries of all fatbin containers inside the image (fatbin or host ELF). */
int image_fatbin_entries(const void *image, size_t size, struct image_entry **entries, int *n, char **cause);
/* Decompresses (or copies) one entry; PTX results are NUL-terminated. */
int image_entry_data(const struct image_entry *e, uint8_t **out, size_t *len, char **cause);
/* The PTX the engine should instrument for a device of compute capability
 * `sm` (e.g. 90): the highest PTX entry not above sm (an "a" entry only when
 * its arch equals sm). For IMAGE_PTX returns a copy. For a cubin or a fatbin
 * without PTX fails with a cause saying the image is SASS only. */
int image_pick_ptx(const void *image, size_t size, int sm, char **ptx, size_t *len, char **cause);
/* Kernel (entry) names in a cubin, or in every ELF entry of a fatbin: lets the
 * hook list SASS-only kernels. malloc'd array of malloc'd strings. */
int image_kernel_names(const void *image, size_t size, char ***names, int *n, char **cause);
void image_free_names(char **names, int n);

#endif
