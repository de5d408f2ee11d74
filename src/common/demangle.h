/* C++ symbol names for display. Kernel names come mangled out of images and
 * launch hooks (_Z7vec_addPfPKfi); the UI shows them demangled. Uses the
 * Itanium ABI demangler in libstdc++ (__cxa_demangle). */
#ifndef NTOP_DEMANGLE_H
#define NTOP_DEMANGLE_H

/* The demangled name ("vec_add(float*, float const*, int)"), or a copy of
 * the input when it is not a C++ name or cannot be demangled. malloc'd;
 * NULL only for a NULL input or when out of memory. */
char *demangle(const char *mangled);
/* The demangled name without its trailing parameter list (and cv/ref
 * qualifiers after it): "vec_add", "void at::native::foo<float>". Template
 * arguments and scopes stay. malloc'd, like demangle(). */
char *demangle_base(const char *mangled);

#endif
