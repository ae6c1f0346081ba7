/* path.h - the one path helper the converter and its callers share: DIR + "/" + NAME. */
#ifndef SN_PATH_H
#define SN_PATH_H

/* malloc'd "dir/name" (no doubled slash when dir ends in '/'); NULL when out of memory. */
char *sn_path_join(const char *dir, const char *name);

#endif
