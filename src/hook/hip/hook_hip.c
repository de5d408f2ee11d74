/* The HIP backend (hook_backend.h): the dispatch of every row and export
 * (our handler, the real function or a stub), the device facts the probe
 * path needs, and process exit / fork handling. Which runtime is the real
 * one is the library's own: hook_hip_open.c (the libamdhip64.so.5 stand-in)
 * or hook_hip_bind.c (libntop_hip.so, ROCm 6/7 through the front). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hook/hook_backend.h"
#include "hook/hook_control.h"
#include "hook/hook_events.h"
#include "hook/hip/hook_hip.h"
#include "hook/hip/hook_hip_exports.h"
#include "hook/hook_kernel_events.h"
#include "hook/hook_log.h"
#include "trace/events.h"

struct hip_real hipr;
void *hip_real_rows[HIP_N_ROWS];

const struct hip_row hip_table[HIP_N_ROWS] = {
#define HIP_ROW_INIT(id, name) [HIP_ROW_##id] = { name, (void *)hook_hip_##id },
	HIP_ROWS(HIP_ROW_INIT)
#undef HIP_ROW_INIT
};

static struct {
	pthread_mutex_t lock;
	struct hip_device dev[HOOK_MAX_DEVICES];
	int known[HOOK_MAX_DEVICES]; /* atomic */
} hipdev = { .lock = PTHREAD_MUTEX_INITIALIZER };

void hook_hip_api_load(void *real)
{
#define HIP_API_LOAD(name, ret, args) hipr.name = real ? (ret(*) args)dlsym(real, #name) : NULL;
	HIP_API(HIP_API_LOAD)
#undef HIP_API_LOAD
}

/* Stubs take no arguments: they are reached through signature-free
 * trampolines and only set the return register. */
static hipError_t hip_missing(void)
{
	return HIP_ERROR_NOT_FOUND;
}

static hipError_t hip_no_runtime(void)
{
	return HIP_ERROR_NOT_INITIALIZED;
}

static void *hip_stub(void)
{
	return hook.driver ? (void *)hip_missing : (void *)hip_no_runtime;
}

static const struct {
	enum hip_row_id row;
	const char *name;
} hip_aliases[] = {
#define HIP_ALIAS_INIT(id, name) { HIP_ROW_##id, name },
	HIP_ROW_ALIASES(HIP_ALIAS_INIT)
#undef HIP_ALIAS_INIT
};

int hook_hip_row_by_name(const char *name)
{
	for (int r = 0; name && r < HIP_N_ROWS; r++)
		if (strcmp(hip_table[r].name, name) == 0)
			return r;
	for (size_t i = 0; name && i < sizeof hip_aliases / sizeof hip_aliases[0]; i++)
		if (strcmp(hip_aliases[i].name, name) == 0)
			return (int)hip_aliases[i].row;
	return -1;
}

/* The row's real function: by its exported name, else by its C name. */
static void *hip_real_sym(int r)
{
	void *fn = dlsym(hook.driver, hip_table[r].name);
	for (size_t i = 0; !fn && i < sizeof hip_aliases / sizeof hip_aliases[0]; i++)
		if ((int)hip_aliases[i].row == r)
			fn = dlsym(hook.driver, hip_aliases[i].name);
	return fn;
}

static void hip_fill(void)
{
	for (int r = 0; r < HIP_N_ROWS; r++) {
		void *fn = hook.driver ? hip_real_sym(r) : NULL;
		hip_real_rows[r] = fn ? fn : hip_stub();
	}
	for (int i = 0; i < hip_export_count; i++) {
		void *fn = NULL;
		for (int r = 0; r < HIP_N_ROWS && !fn; r++)
			if (strcmp(hip_table[r].name, hip_export_names[i]) == 0)
				fn = hip_table[r].handler;
		if (!fn && hook.driver)
			fn = dlsym(hook.driver, hip_export_names[i]);
		hip_dispatch[i] = fn ? fn : hip_stub();
	}
}

static int hip_init(char **cause)
{
	if (hook_hip_open_real(cause) < 0)
		return -1;
	hook_log("real HIP runtime %s", hook.real_path);
	hook_hip_api_load(hook.driver);
	return 0;
}

static void hip_exit_event(void)
{
	uint64_t launches = __atomic_load_n(&hook.launches, __ATOMIC_RELAXED);
	pthread_mutex_lock(&hook.reg.lock);
	uint32_t n = hook.reg.n_kernels;
	for (uint32_t i = 0; i < n; i++) {
		struct hook_kernel *k = hook.reg.all[i];
		uint64_t kl = __atomic_load_n(&k->launches, __ATOMIC_RELAXED);
		launches += kl;
		if (kl)
			hook_stats_line(k, kl);
	}
	pthread_mutex_unlock(&hook.reg.lock);
	struct strbuf sb;
	hook_event_begin(&sb, "exit");
	event_add_int(&sb, "launches", (long long)launches);
	hook_event_emit(&sb);
}

static void hip_shutdown(void)
{
	hook_control_shutdown();
	hook_hip_results_shutdown();
	hip_exit_event();
}

static void hip_fork_child(void)
{
	pthread_mutex_init(&hipdev.lock, NULL);
	for (uint32_t i = 0; i < hook.reg.n_kernels; i++) {
		__atomic_store_n(&hook.reg.all[i]->last_hash, 0, __ATOMIC_RELAXED);
		hook.reg.all[i]->launched = 0;
	}
	hook_hip_results_fork_child();
	hook_control_fork_child();
}

static const char *hip_driver_path(void)
{
	return hook.driver ? hook.real_path : NULL;
}

static const struct hook_backend hook_hip_backend = {
	.name = "hip",
	.what = "HIP runtime",
	.init = hip_init,
	.fill = hip_fill,
	.shutdown = hip_shutdown,
	.fork_child = hip_fork_child,
	.driver_path = hip_driver_path,
};

const struct hook_backend *const hook_backend_in_use = &hook_hip_backend;

static void hip_prop_str(const uint8_t *props, size_t off, char *out, size_t len)
{
	snprintf(out, len, "%.*s", (int)strnlen((const char *)props + off, HIP_PROPS_STR), (const char *)props + off);
}

/* The device's properties: ROCm 6's layout (hipGetDevicePropertiesR0600)
 * where the runtime has it, else HIP 5's (the unversioned export, R0000). */
static void hip_props_read(struct hip_device *hd, int ordinal)
{
	struct hook_device *d = hd->d;
	uint8_t props[HIP_PROPS6_SIZE + 1024]; /* room for a runtime that writes more */
	size_t clock = HIP_PROPS_CLOCK_KHZ, cus = HIP_PROPS_CUS, arch = HIP_PROPS_ARCH_NAME;
	hipError_t e = HIP_ERROR_NOT_FOUND;
	memset(props, 0, sizeof props);
	if (hipr.hipGetDevicePropertiesR0600) {
		e = hipr.hipGetDevicePropertiesR0600(props, ordinal);
		clock = HIP_PROPS6_CLOCK_KHZ, cus = HIP_PROPS6_CUS, arch = HIP_PROPS6_ARCH_NAME;
	} else if (hipr.hipGetDeviceProperties) {
		e = hipr.hipGetDeviceProperties(props, ordinal);
	}
	if (e != HIP_SUCCESS)
		return;
	hip_prop_str(props, HIP_PROPS_NAME, d->name, sizeof d->name);
	hip_prop_str(props, arch, hd->arch, sizeof hd->arch);
	memcpy(&d->clock_khz, props + clock, sizeof d->clock_khz);
	memcpy(&d->sms, props + cus, sizeof d->sms);
}

/* Fills the device's facts once and emits `device`. */
static void hip_device_fill(struct hip_device *hd, int ordinal)
{
	struct hook_device *d = &hook.dev[ordinal];
	hd->ordinal = ordinal;
	hd->d = d;
	hip_props_read(hd, ordinal);
	if (!d->name[0])
		snprintf(d->name, sizeof d->name, "device %d", ordinal);
	struct strbuf sb;
	hook_event_begin(&sb, "device");
	event_add_int(&sb, "ordinal", ordinal);
	event_add(&sb, "name", d->name);
	event_add_int(&sb, "cc", 0);
	event_add(&sb, "arch", hd->arch[0] ? hd->arch : "unknown");
	event_add_int(&sb, "sms", d->sms);
	event_add_int(&sb, "clock_khz", d->clock_khz);
	hook_event_emit(&sb);
	d->known = 1;
}

const struct hip_device *hook_hip_device(void)
{
	int ordinal = -1;
	if (!hipr.hipGetDevice || hipr.hipGetDevice(&ordinal) != HIP_SUCCESS || ordinal < 0 ||
	    ordinal >= HOOK_MAX_DEVICES)
		return NULL;
	struct hip_device *hd = &hipdev.dev[ordinal];
	if (__atomic_load_n(&hipdev.known[ordinal], __ATOMIC_ACQUIRE))
		return hd;
	pthread_mutex_lock(&hipdev.lock);
	if (!hipdev.known[ordinal]) {
		hip_device_fill(hd, ordinal);
		__atomic_store_n(&hipdev.known[ordinal], 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&hipdev.lock);
	return hd;
}
