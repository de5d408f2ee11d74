// Issue 11, -rdc=true build: a device function another translation unit calls.
__device__ float rdc_twice(float v)
{
	return 2.0f * v;
}
