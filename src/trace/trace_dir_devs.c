/* Which GPU a launch ran on (trace_dir.h): the `dev=` of launch lines and
 * the per-device counts of `stats` lines, as views show them. */
#include <stdio.h>

#include "trace/trace_dir.h"

int td_result_dev(const struct td_result *r)
{
	return r->has_config ? r->config.dev : -1;
}

int td_process_n_devices(const struct trace_dir *td, uint32_t pid)
{
	int n = 0;
	for (int i = 0; i < td->n_devices; i++)
		n += td->devices[i].pid == pid;
	return n;
}

const struct td_device *trace_dir_device_of(const struct trace_dir *td, uint32_t pid, int ordinal)
{
	for (int i = 0; i < td->n_devices; i++)
		if (td->devices[i].pid == pid && td->devices[i].ordinal == ordinal)
			return &td->devices[i];
	return NULL;
}

int td_kernel_n_devs(const struct td_kernel *k)
{
	return __builtin_popcount(k->devs);
}

const char *td_kernel_devs_text(const struct td_kernel *k, int counts, char *buf, size_t n)
{
	size_t o = 0;
	buf[0] = 0;
	for (int d = 0; d < TD_DEVICES && o < n; d++) {
		if (!(k->devs >> d & 1))
			continue;
		if (counts && k->dev_launches[d])
			o += (size_t)snprintf(buf + o, n - o, "%s%d (%llu)", o ? ", " : "", d,
					      (unsigned long long)k->dev_launches[d]);
		else
			o += (size_t)snprintf(buf + o, n - o, "%s%d", o ? (counts ? ", " : ",") : "", d);
	}
	return buf;
}

const struct td_device *trace_dir_launch_device(const struct trace_dir *td, const struct td_kernel *k, uint64_t seq)
{
	for (int i = 0; k && i < k->n_results; i++) {
		const struct td_result *r = &td->results[k->results[i]];
		const struct td_device *d = r->seq == seq && td_result_dev(r) >= 0 ? trace_dir_device_of(td, r->pid, td_result_dev(r)) : NULL;
		if (d)
			return d;
	}
	return k ? trace_dir_device(td, k->pid) : NULL;
}
