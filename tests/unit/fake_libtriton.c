/* A shared object test_ptxas_locate loads under the name Triton's own
 * library has (triton/_C/libtriton.so), as a Python process would. */
int fake_libtriton_marker(void);
int fake_libtriton_marker(void)
{
	return 42;
}
