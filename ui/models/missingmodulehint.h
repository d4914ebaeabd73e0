#pragma once

#include <QString>

namespace loopscope {

// The local sandbox runs this machine's /usr/bin/python3 (bubblewrap mounts the host's /usr
// read-only), so a module it lacks is installed on the host with apt. For a
// "ModuleNotFoundError: No module named 'X'" of a module Debian packages, the hint to show;
// empty otherwise.
namespace MissingModuleHint {
// "python3-matplotlib" for "matplotlib" (or "matplotlib.pyplot"); empty when not in the table.
QString debianPackageFor(const QString &module);
// The hint for an error (name + value, or a whole traceback); empty when none applies.
QString forError(const QString &errorName, const QString &errorText);
} // namespace MissingModuleHint

} // namespace loopscope
