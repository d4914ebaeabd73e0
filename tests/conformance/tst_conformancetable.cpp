// Keeps tests/conformance/README.md honest: one row per reference case, and every row names a
// test function that exists (under the reference's own name) in the file it claims.

#include <QDir>
#include <QFile>
#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

class TestConformanceTable : public QObject {
    Q_OBJECT

    // `grep -c "def test_"` over LiteLLM's reference suite (test_handler.py at 13928bdabe).
    static constexpr int kReferenceCases = 54;

    QString sourceDir() const {
        const QString dir = qEnvironmentVariable("LOOPSCOPE_SOURCE_DIR");
        return dir.isEmpty() ? QString() : dir + QStringLiteral("/tests/conformance");
    }

    static QString readAll(const QString &path) {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return {};
        return QString::fromUtf8(file.readAll());
    }

private slots:
    void everyReferenceCaseHasAPassingTwin() {
        const QString dir = sourceDir();
        QVERIFY2(!dir.isEmpty(), "LOOPSCOPE_SOURCE_DIR is not set (run through ctest)");
        const QString readme = readAll(dir + QStringLiteral("/README.md"));
        QVERIFY2(!readme.isEmpty(), "README.md missing");

        // | n | `reference_case` | `tst_file.cpp::function` | notes |
        const QRegularExpression row(
            QStringLiteral(R"re(^\| (\d+) \| `(test_\w+)` \| `(tst_\w+\.cpp)::(\w+)` \|)re"),
            QRegularExpression::MultilineOption);
        QSet<QString> referenceNames;
        QHash<QString, QString> sources;
        int rows = 0;
        auto it = row.globalMatch(readme);
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            ++rows;
            QCOMPARE(m.captured(1).toInt(), rows);
            const QString reference = m.captured(2);
            const QString file = m.captured(3);
            const QString function = m.captured(4);
            QVERIFY2(!referenceNames.contains(reference),
                     qPrintable(reference + QStringLiteral(" listed twice")));
            referenceNames.insert(reference);
            QCOMPARE(function, reference); // same snake_case name
            if (!sources.contains(file))
                sources.insert(file, readAll(dir + QLatin1Char('/') + file));
            const QRegularExpression slot(QStringLiteral("void %1\\(\\)").arg(function));
            QVERIFY2(slot.match(sources.value(file)).hasMatch(),
                     qPrintable(file + QStringLiteral(" has no test function ") + function));
        }
        QCOMPARE(rows, kReferenceCases);

        // And no conformance test function lacks a row.
        const QStringList files = QDir(dir).entryList({QStringLiteral("tst_*.cpp")}, QDir::Files);
        const QRegularExpression anySlot(QStringLiteral(R"re(void (test_\w+)\(\))re"));
        for (const QString &file : files) {
            auto found = anySlot.globalMatch(readAll(dir + QLatin1Char('/') + file));
            while (found.hasNext()) {
                const QString name = found.next().captured(1);
                if (name.endsWith(QLatin1String("_data")))
                    continue;
                QVERIFY2(referenceNames.contains(name),
                         qPrintable(file + QStringLiteral("::") + name));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestConformanceTable)
#include "tst_conformancetable.moc"
