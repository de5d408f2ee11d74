/* What an -rdc build holds (app_rdc.c): the device-linked fatbin the runtime
 * loads, SASS only (tests/corpus/images/vec_sass.fatbin), and the
 * translation unit's relocatable fatbin with its PTX in __nv_relfatbin
 * (vec_plain.fatbin). Assembled with -I tests/corpus/images. */
	.section .nv_fatbin, "a"
	.balign 16
	.globl rdc_linked
rdc_linked:
	.incbin "vec_sass.fatbin"
	.globl rdc_linked_end
rdc_linked_end:
	.section __nv_relfatbin, ""
	.balign 16
	.incbin "vec_plain.fatbin"
	.section .note.GNU-stack, "", @progbits
