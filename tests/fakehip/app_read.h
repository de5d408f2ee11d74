/* The test apps' one helper: a whole file read into memory (malloc'd),
 * NULL when it cannot be. */
#ifndef FAKEHIP_APP_READ_H
#define FAKEHIP_APP_READ_H

void *app_read_file(const char *path);

#endif
