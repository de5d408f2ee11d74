// The other unit of an -rdc=true build: a device function rdc_main.cu calls.
__device__ float rdc_twice(float v)
{
	return 2.0f * v;
}
