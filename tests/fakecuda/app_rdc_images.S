/* What an -rdc build holds (app_rdc.c): the device-linked fatbin the runtime
 * loads, SASS only, and the translation units' relocatable fatbins with
 * their PTX in __nv_relfatbin (tests/corpus/images/rdc_*.fatbin, from
 * tests/gpu/jit_programs/rdc_*.cu). Assembled with -I tests/corpus/images. */
	.section .nv_fatbin, "a"
	.balign 16
	.globl rdc_linked
rdc_linked:
	.incbin "rdc_linked.fatbin"
	.globl rdc_linked_end
rdc_linked_end:
	.section __nv_relfatbin, ""
	.balign 16
	.incbin "rdc_rel.fatbin"
	.section .note.GNU-stack, "", @progbits
