/* admission_config.h - the server's --admission-control-config-file:
 * kube-apiserver's AdmissionConfiguration (apiserver.config.k8s.io/v1, YAML
 * or JSON). */
#ifndef TY_CLI_ADMISSION_CONFIG_H
#define TY_CLI_ADMISSION_CONFIG_H

#include "base/error.h"

/* Reads the file at path: the ResourceQuota plugin's configuration, inline
 * or in the file its path names (relative to this file's directory), sets
 * the limited resources (api/quota_limited.h). A plugin this server does
 * not configure so is refused (a security setting must not be ignored in
 * silence). -1 with err. */
int admission_config_load(const char *path, ty_error *err);

#endif
