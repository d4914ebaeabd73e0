// The apt hint for a module the sandbox's Python (this machine's /usr/bin/python3) lacks.
#include "models/missingmodulehint.h"

#include <QTest>

using namespace loopscope;

class TestMissingModuleHint : public QObject {
    Q_OBJECT

private slots:
    void hintForTheError_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("package"); // empty: no hint
        QTest::newRow("matplotlib") << QStringLiteral("ModuleNotFoundError")
                                    << QStringLiteral("No module named 'matplotlib'")
                                    << QStringLiteral("python3-matplotlib");
        QTest::newRow("submodule") << QStringLiteral("ModuleNotFoundError")
                                   << QStringLiteral("No module named 'matplotlib.pyplot'")
                                   << QStringLiteral("python3-matplotlib");
        QTest::newRow("PIL is Pillow")
            << QStringLiteral("ModuleNotFoundError") << QStringLiteral("No module named 'PIL'")
            << QStringLiteral("python3-pil");
        QTest::newRow("sklearn") << QStringLiteral("ModuleNotFoundError")
                                 << QStringLiteral("No module named 'sklearn'")
                                 << QStringLiteral("python3-sklearn");
        QTest::newRow("seaborn") << QStringLiteral("ModuleNotFoundError")
                                 << QStringLiteral("No module named 'seaborn'")
                                 << QStringLiteral("python3-seaborn");
        QTest::newRow("not packaged")
            << QStringLiteral("ModuleNotFoundError")
            << QStringLiteral("No module named 'my_private_mod'") << QString();
        QTest::newRow("other error") << QStringLiteral("NameError")
                                     << QStringLiteral("name 'pandas' is not defined") << QString();
    }
    void hintForTheError() {
        QFETCH(QString, name);
        QFETCH(QString, value);
        QFETCH(QString, package);
        const QString hint = MissingModuleHint::forError(name, value);
        if (package.isEmpty()) {
            QVERIFY2(hint.isEmpty(), qPrintable(hint));
            return;
        }
        QVERIFY2(hint.startsWith(QStringLiteral("Install it on this machine: sudo apt install ") +
                                 package),
                 qPrintable(hint));
    }
};

QTEST_GUILESS_MAIN(TestMissingModuleHint)
#include "tst_missingmodulehint.moc"
