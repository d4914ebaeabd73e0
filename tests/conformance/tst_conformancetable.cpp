// Keeps tests/conformance/README.md honest: one row per reference case, every row names a test
// function that exists (under the reference's own name) in the file it claims, and the production
// function it exercises — which the twin really calls and the running proxy really runs. The
// driver-step table lists every interception function the one driver (AgenticLoop) calls.

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

namespace {

QString readAll(const QString &path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

// The brace-matched body following the first match of `head` (which ends at its '{'), or "".
QString bodyAfter(const QString &text, const QRegularExpression &head) {
    const QRegularExpressionMatch m = head.match(text);
    if (!m.hasMatch())
        return {};
    int depth = 1;
    for (qsizetype i = m.capturedEnd(); i < text.size(); ++i) {
        if (text.at(i) == u'{')
            ++depth;
        else if (text.at(i) == u'}' && --depth == 0)
            return text.mid(m.capturedEnd(), i - m.capturedEnd());
    }
    return {};
}

// "3–8, 12" → {3,4,5,6,7,8,12}; "—" → {}.
QSet<int> caseNumbers(const QString &cell) {
    QSet<int> out;
    static const QRegularExpression item(QStringLiteral(R"re((\d+)(?:\s*[–-]\s*(\d+))?)re"));
    auto it = item.globalMatch(cell);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        const int from = m.captured(1).toInt();
        const int to = m.captured(2).isEmpty() ? from : m.captured(2).toInt();
        for (int n = from; n <= to; ++n)
            out.insert(n);
    }
    return out;
}

} // namespace

class TestConformanceTable : public QObject {
    Q_OBJECT

    // `grep -c "def test_"` over LiteLLM's reference suite (test_handler.py at 13928bdabe).
    static constexpr int kReferenceCases = 54;

    QString m_root;
    QString m_readme;
    QHash<QString, QString> m_production; // relative path → text, core/ and app/ sources

    QString dir() const { return m_root + QStringLiteral("/tests/conformance"); }

    // Defined in core/ (out of line as Owner::name( at the start of a line, or inline in the
    // class/namespace named Owner) and called on an indented line of a production .cpp.
    QString productionProblem(const QString &qualified) const {
        const qsizetype sep = qualified.lastIndexOf(QLatin1String("::"));
        const QString owner = qualified.left(sep);
        const QString name = qualified.mid(sep + 2);
        const QRegularExpression outOfLine(
            QStringLiteral(R"re(^\S[^\n;]*\b%1::%2\()re")
                .arg(QRegularExpression::escape(owner), QRegularExpression::escape(name)),
            QRegularExpression::MultilineOption);
        const QRegularExpression scope(
            QStringLiteral(R"re(\b(?:class|struct|namespace)\s+(?:\w+::)*%1\b)re").arg(owner));
        const QRegularExpression declared(
            QStringLiteral(R"re(\b%1\([^;{]*\)[^;{]*(\{|;))re").arg(name));
        // Column-0 lines are definitions; a call is on an indented line.
        const QRegularExpression call(QStringLiteral(R"re(^[ \t]+[^\n]*\b%1\()re").arg(name),
                                      QRegularExpression::MultilineOption);
        bool defined = false;
        bool called = false;
        for (auto it = m_production.cbegin(); it != m_production.cend(); ++it) {
            const QString &text = it.value();
            if (outOfLine.match(text).hasMatch() ||
                (scope.match(text).hasMatch() && declared.match(text).hasMatch() &&
                 it.key().startsWith(QLatin1String("core/"))))
                defined = true;
            if (it.key().endsWith(QLatin1String(".cpp")) && call.match(text).hasMatch())
                called = true;
        }
        if (!defined)
            return qualified + QStringLiteral(" is not defined in core/");
        if (!called)
            return qualified + QStringLiteral(" is never called by production code");
        return {};
    }

private slots:
    void initTestCase() {
        m_root = qEnvironmentVariable("LOOPSCOPE_SOURCE_DIR");
        QVERIFY2(!m_root.isEmpty(), "LOOPSCOPE_SOURCE_DIR is not set (run through ctest)");
        m_readme = readAll(dir() + QStringLiteral("/README.md"));
        QVERIFY2(!m_readme.isEmpty(), "README.md missing");
        for (const QString &top : {QStringLiteral("core"), QStringLiteral("app")}) {
            QDirIterator it(m_root + u'/' + top, {QStringLiteral("*.cpp"), QStringLiteral("*.h")},
                            QDir::Files, QDirIterator::Subdirectories);
            while (it.hasNext()) {
                const QString path = it.next();
                m_production.insert(path.mid(m_root.size() + 1), readAll(path));
            }
        }
        QVERIFY(m_production.contains(QStringLiteral("core/loop/agenticloop.cpp")));
    }

    void everyReferenceCaseHasATwinOfAProductionFunction() {
        // | n | `reference_case` | `tst_file.cpp::function` | `Owner::function` | notes |
        const QRegularExpression row(
            QStringLiteral(
                R"re(^\| (\d+) \| `(test_\w+)` \| `(tst_\w+\.cpp)::(\w+)` \| `((?:\w+::)+\w+)` \|)re"),
            QRegularExpression::MultilineOption);
        const QString fixture = readAll(dir() + QStringLiteral("/conformancefixture.h"));
        QSet<QString> referenceNames;
        QHash<QString, QString> sources;
        int rows = 0;
        auto it = row.globalMatch(m_readme);
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            ++rows;
            QCOMPARE(m.captured(1).toInt(), rows);
            const QString reference = m.captured(2);
            const QString file = m.captured(3);
            const QString function = m.captured(4);
            const QString production = m.captured(5);
            QVERIFY2(!referenceNames.contains(reference),
                     qPrintable(reference + QStringLiteral(" listed twice")));
            referenceNames.insert(reference);
            QCOMPARE(function, reference); // same snake_case name
            if (!sources.contains(file))
                sources.insert(file, readAll(dir() + u'/' + file));
            const QString body = bodyAfter(
                sources.value(file),
                QRegularExpression(QStringLiteral(R"re(void %1\(\)\s*\{)re").arg(function)));
            QVERIFY2(!body.isEmpty(),
                     qPrintable(file + QStringLiteral(" has no test function ") + function));

            // The twin calls the function: itself, through a fixture helper, or (for the
            // driver's own functions) by running the production driver.
            const QString name = production.mid(production.lastIndexOf(QLatin1String("::")) + 2);
            const QRegularExpression callsName(QStringLiteral(R"re(\b%1\()re").arg(name));
            bool exercised = callsName.match(body).hasMatch();
            if (production.startsWith(QLatin1String("AgenticLoop::")))
                exercised = body.contains(QLatin1String("LoopDriver"));
            static const QRegularExpression helperCall(QStringLiteral(R"re(\b(\w+)\()re"));
            auto helpers = helperCall.globalMatch(body);
            while (!exercised && helpers.hasNext()) {
                // A fixture helper: from its `inline ... name(` to the column-0 brace ending it.
                const QRegularExpression helper(QStringLiteral(R"re(\ninline\b[^;]*?\b%1\()re")
                                                    .arg(helpers.next().captured(1)));
                const QRegularExpressionMatch found = helper.match(fixture);
                if (!found.hasMatch())
                    continue;
                const qsizetype end = fixture.indexOf(QLatin1String("\n}\n"), found.capturedEnd());
                exercised =
                    callsName.match(fixture.mid(found.capturedStart(), end - found.capturedStart()))
                        .hasMatch();
            }
            QVERIFY2(exercised, qPrintable(file + QStringLiteral("::") + function +
                                           QStringLiteral(" does not call ") + production));
            const QString problem = productionProblem(production);
            QVERIFY2(problem.isEmpty(), qPrintable(QString::number(rows) + u' ' + problem));
        }
        QCOMPARE(rows, kReferenceCases);

        // And no conformance test function lacks a row.
        const QStringList files = QDir(dir()).entryList({QStringLiteral("tst_*.cpp")}, QDir::Files);
        const QRegularExpression anySlot(QStringLiteral(R"re(void (test_\w+)\(\))re"));
        for (const QString &file : files) {
            auto found = anySlot.globalMatch(readAll(dir() + u'/' + file));
            while (found.hasNext()) {
                const QString name = found.next().captured(1);
                if (name.endsWith(QLatin1String("_data")))
                    continue;
                QVERIFY2(referenceNames.contains(name),
                         qPrintable(file + QStringLiteral("::") + name));
            }
        }
    }

    void theDriverStepTableCoversWhatTheDriverCalls() {
        // | step | `Owner::function` | cases | test files |
        const QRegularExpression stepRow(
            QStringLiteral(R"re(^\| ([^|]+) \| `((?:\w+::)+\w+)` \| ([^|]*) \| ([^|]*) \|$)re"),
            QRegularExpression::MultilineOption);
        const QRegularExpression caseRow(
            QStringLiteral(R"re(^\| (\d+) \| `test_\w+` \| `[^`]+` \| `((?:\w+::)+\w+)` \|)re"),
            QRegularExpression::MultilineOption);
        QHash<QString, QSet<int>> mapped; // production function → case numbers
        auto cases = caseRow.globalMatch(m_readme);
        while (cases.hasNext()) {
            const QRegularExpressionMatch m = cases.next();
            mapped[m.captured(2)].insert(m.captured(1).toInt());
        }
        QVERIFY(!mapped.isEmpty());

        QSet<QString> steps;
        auto it = stepRow.globalMatch(m_readme);
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            const QString function = m.captured(2);
            steps.insert(function);
            const QString problem = productionProblem(function);
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
            QVERIFY2(caseNumbers(m.captured(3)) == mapped.value(function),
                     qPrintable(function + QStringLiteral(": the step row's cases differ from "
                                                          "the cases mapped to it")));
            static const QRegularExpression testFile(QStringLiteral(R"re(`(tests/[^`]+)`)re"));
            auto files = testFile.globalMatch(m.captured(4));
            while (files.hasNext()) {
                const QString file = files.next().captured(1);
                QVERIFY2(QFile::exists(m_root + u'/' + file),
                         qPrintable(file + QStringLiteral(" missing")));
            }
        }
        QVERIFY(steps.size() >= 8);

        // Every interception / follow-up function the driver calls has its step row.
        const QString driver = m_production.value(QStringLiteral("core/loop/agenticloop.cpp"));
        const QRegularExpression used(QStringLiteral(
            R"re((?:m_interception->|CodeInterpreterInterception::|AgenticFollowUp::)(\w+)\()re"));
        auto calls = used.globalMatch(driver);
        int seen = 0;
        while (calls.hasNext()) {
            const QRegularExpressionMatch m = calls.next();
            const QString owner = m.captured(0).startsWith(QLatin1String("AgenticFollowUp"))
                                      ? QStringLiteral("AgenticFollowUp::")
                                      : QStringLiteral("CodeInterpreterInterception::");
            ++seen;
            QVERIFY2(steps.contains(owner + m.captured(1)),
                     qPrintable(owner + m.captured(1) +
                                QStringLiteral(" is called by AgenticLoop but has no step row")));
        }
        QVERIFY(seen >= 8);
    }
};

QTEST_GUILESS_MAIN(TestConformanceTable)
#include "tst_conformancetable.moc"
