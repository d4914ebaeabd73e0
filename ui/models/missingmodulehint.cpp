#include "models/missingmodulehint.h"

#include <QHash>
#include <QRegularExpression>

namespace loopscope {

QString MissingModuleHint::debianPackageFor(const QString &module) {
    // Import names whose Debian package is not simply python3-<name>, and the common
    // data-analysis modules a model reaches for.
    static const QHash<QString, QString> table{
        {QStringLiteral("matplotlib"), QStringLiteral("python3-matplotlib")},
        {QStringLiteral("mpl_toolkits"), QStringLiteral("python3-matplotlib")},
        {QStringLiteral("pandas"), QStringLiteral("python3-pandas")},
        {QStringLiteral("numpy"), QStringLiteral("python3-numpy")},
        {QStringLiteral("scipy"), QStringLiteral("python3-scipy")},
        {QStringLiteral("PIL"), QStringLiteral("python3-pil")},
        {QStringLiteral("seaborn"), QStringLiteral("python3-seaborn")},
        {QStringLiteral("sklearn"), QStringLiteral("python3-sklearn")},
        {QStringLiteral("skimage"), QStringLiteral("python3-skimage")},
        {QStringLiteral("statsmodels"), QStringLiteral("python3-statsmodels")},
        {QStringLiteral("sympy"), QStringLiteral("python3-sympy")},
        {QStringLiteral("networkx"), QStringLiteral("python3-networkx")},
        {QStringLiteral("openpyxl"), QStringLiteral("python3-openpyxl")},
        {QStringLiteral("xlrd"), QStringLiteral("python3-xlrd")},
        {QStringLiteral("yaml"), QStringLiteral("python3-yaml")},
        {QStringLiteral("bs4"), QStringLiteral("python3-bs4")},
        {QStringLiteral("lxml"), QStringLiteral("python3-lxml")},
        {QStringLiteral("tabulate"), QStringLiteral("python3-tabulate")},
        {QStringLiteral("dateutil"), QStringLiteral("python3-dateutil")},
        {QStringLiteral("pyarrow"), QStringLiteral("python3-pyarrow")},
    };
    return table.value(module.section(u'.', 0, 0));
}

QString MissingModuleHint::forError(const QString &errorName, const QString &errorText) {
    static const QRegularExpression pattern(
        QStringLiteral("ModuleNotFoundError: No module named '([A-Za-z0-9_.]+)'"));
    const QString text = errorName + QStringLiteral(": ") + errorText;
    const QRegularExpressionMatch match = pattern.match(text);
    if (!match.hasMatch())
        return {};
    const QString package = debianPackageFor(match.captured(1));
    if (package.isEmpty())
        return {};
    return QStringLiteral("Install it on this machine: sudo apt install %1 (the sandbox runs this "
                          "machine's /usr/bin/python3)")
        .arg(package);
}

} // namespace loopscope
