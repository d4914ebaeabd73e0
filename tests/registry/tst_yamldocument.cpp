#include "config/yamldocument.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace loopscope;

class TestYamlDocument : public QObject {
    Q_OBJECT

private slots:
    void scalars_data() {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QJsonValue>("expected");
        QTest::newRow("plain int") << QByteArray("v: 5") << QJsonValue(5);
        QTest::newRow("double-quoted int")
            << QByteArray("v: \"5\"") << QJsonValue(QStringLiteral("5"));
        QTest::newRow("single-quoted int")
            << QByteArray("v: '5'") << QJsonValue(QStringLiteral("5"));
        QTest::newRow("negative int") << QByteArray("v: -12") << QJsonValue(-12);
        QTest::newRow("float") << QByteArray("v: 1.5") << QJsonValue(1.5);
        QTest::newRow("exponent") << QByteArray("v: 2e3") << QJsonValue(2000.0);
        QTest::newRow("plain true") << QByteArray("v: true") << QJsonValue(true);
        QTest::newRow("plain False") << QByteArray("v: False") << QJsonValue(false);
        QTest::newRow("quoted false")
            << QByteArray("v: \"false\"") << QJsonValue(QStringLiteral("false"));
        QTest::newRow("tagged str") << QByteArray("v: !!str 7") << QJsonValue(QStringLiteral("7"));
        QTest::newRow("tilde") << QByteArray("v: ~") << QJsonValue(QJsonValue::Null);
        QTest::newRow("null word") << QByteArray("v: null") << QJsonValue(QJsonValue::Null);
        QTest::newRow("empty value") << QByteArray("v:") << QJsonValue(QJsonValue::Null);
        QTest::newRow("quoted null")
            << QByteArray("v: 'null'") << QJsonValue(QStringLiteral("null"));
        QTest::newRow("plain text")
            << QByteArray("v: gpt-5") << QJsonValue(QStringLiteral("gpt-5"));
        QTest::newRow("inf word is text")
            << QByteArray("v: inf") << QJsonValue(QStringLiteral("inf"));
        QTest::newRow("nan word is text")
            << QByteArray("v: nan") << QJsonValue(QStringLiteral("nan"));
        QTest::newRow("yes is text (YAML 1.2)")
            << QByteArray("v: yes") << QJsonValue(QStringLiteral("yes"));
        QTest::newRow("version-like text")
            << QByteArray("v: 1.2.3") << QJsonValue(QStringLiteral("1.2.3"));
        QTest::newRow("env reference") << QByteArray("v: os.environ/E2B_API_KEY")
                                       << QJsonValue(QStringLiteral("os.environ/E2B_API_KEY"));
        QTest::newRow("flow list")
            << QByteArray("v: [openai, \"2\", 3]")
            << QJsonValue(QJsonArray{QStringLiteral("openai"), QStringLiteral("2"), 3});
    }
    void scalars() {
        QFETCH(QByteArray, yaml);
        QFETCH(QJsonValue, expected);
        const YamlDocument doc = YamlDocument::fromText(yaml);
        QVERIFY2(doc.isValid(), qPrintable(doc.error()));
        QCOMPARE(doc.root().value(QStringLiteral("v")), expected);
    }

    void infinityAndNan() {
        const YamlDocument doc = YamlDocument::fromText("a: .inf\nb: -.inf\nc: .nan\n");
        QVERIFY(doc.isValid());
        QVERIFY(std::isinf(doc.root().value(QStringLiteral("a")).toDouble()));
        QVERIFY(doc.root().value(QStringLiteral("b")).toDouble() < 0);
        QVERIFY(std::isnan(doc.root().value(QStringLiteral("c")).toDouble()));
    }

    void linesOfNestedPaths() {
        const QByteArray yaml = "# comment\n"                               // 1
                                "model_list:\n"                             // 2
                                "  - model_name: gpt-5\n"                   // 3
                                "    litellm_params:\n"                     // 4
                                "      model: openai/gpt-5\n"               // 5
                                "litellm_settings:\n"                       // 6
                                "  code_interpreter_interception_params:\n" // 7
                                "    enabled_providers:\n"                  // 8
                                "      - openai\n"                          // 9
                                "      - 5\n"                               // 10
                                "    sandbox_tool_name:\n";                 // 11
        const YamlDocument doc = YamlDocument::fromText(yaml);
        QVERIFY2(doc.isValid(), qPrintable(doc.error()));
        QCOMPARE(doc.lineOf(QStringLiteral("model_list")), 2);
        QCOMPARE(doc.lineOf(QStringLiteral("model_list[0]")), 3);
        QCOMPARE(doc.lineOf(QStringLiteral("model_list[0].model_name")), 3);
        QCOMPARE(doc.lineOf(QStringLiteral("model_list[0].litellm_params")), 4);
        QCOMPARE(doc.lineOf(QStringLiteral("model_list[0].litellm_params.model")), 5);
        QCOMPARE(
            doc.lineOf(QStringLiteral("litellm_settings.code_interpreter_interception_params")), 7);
        QCOMPARE(doc.lineOf(QStringLiteral(
                     "litellm_settings.code_interpreter_interception_params.enabled_providers")),
                 8);
        QCOMPARE(doc.lineOf(QStringLiteral(
                     "litellm_settings.code_interpreter_interception_params.enabled_providers[1]")),
                 10);
        QCOMPARE(doc.lineOf(QStringLiteral(
                     "litellm_settings.code_interpreter_interception_params.sandbox_tool_name")),
                 11);
        QCOMPARE(doc.lineOf(QStringLiteral("no.such.key")), 0);
        QCOMPARE(doc.root()
                     .value(QStringLiteral("model_list"))
                     .toArray()
                     .at(0)
                     .toObject()
                     .value(QStringLiteral("litellm_params"))
                     .toObject()
                     .value(QStringLiteral("model"))
                     .toString(),
                 QStringLiteral("openai/gpt-5"));
    }

    void invalidYamlReportsLine_data() {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<int>("line");
        QTest::newRow("unclosed flow list") << QByteArray("a: 1\nb: [1, 2\nc: 3\n") << 3;
        QTest::newRow("bad indentation") << QByteArray("a:\n  b: 1\n c: 2\n") << 3;
        QTest::newRow("nested mapping on one line") << QByteArray("x: 1\na: b: c\n") << 2;
        QTest::newRow("tab indentation") << QByteArray("a:\n\tb: 1\n") << 2;
    }
    void invalidYamlReportsLine() {
        QFETCH(QByteArray, yaml);
        QFETCH(int, line);
        const YamlDocument doc = YamlDocument::fromText(yaml);
        QVERIFY(!doc.isValid());
        QVERIFY2(doc.error().startsWith(QStringLiteral("invalid YAML at line %1,").arg(line)),
                 qPrintable(doc.error()));
        QVERIFY(doc.root().isEmpty());
    }

    void rootMustBeMapping() {
        const YamlDocument doc = YamlDocument::fromText("\n- a\n- b\n");
        QVERIFY(!doc.isValid());
        QCOMPARE(doc.error(), QStringLiteral("config root must be a mapping (line 2)"));
    }

    void emptyDocumentIsValidAndEmpty() {
        for (const QByteArray &text : {QByteArray(), QByteArray("# only a comment\n")}) {
            const YamlDocument doc = YamlDocument::fromText(text);
            QVERIFY(doc.isValid());
            QVERIFY(doc.root().isEmpty());
        }
    }

    // Found by tests/fuzz/config (corpus crash-recursive-alias): an alias inside the node its
    // anchor names recursed without end (stack overflow). Aliases that repeat big nodes must
    // not expand without bound either.
    void runawayAliasesAreRefused_data() {
        QTest::addColumn<QByteArray>("yaml");
        QTest::newRow("alias to its own ancestor") << QByteArray("x: &k abc\ny: &k {a: *k}\n");
        QByteArray laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
        for (const char *level : {"b", "c", "d", "e"}) {
            const QByteArray previous(1, char(level[0] - 1));
            laughs += QByteArray(level) + ": &" + level + " [" +
                      QByteArrayList(10, "*" + previous).join(", ") + "]\n";
        }
        QTest::newRow("billion laughs") << laughs;
    }
    void runawayAliasesAreRefused() {
        QFETCH(QByteArray, yaml);
        const YamlDocument doc = YamlDocument::fromText(yaml);
        QVERIFY(!doc.isValid());
        QVERIFY2(doc.error().contains(QStringLiteral("a YAML alias that refers to itself")),
                 qPrintable(doc.error()));
        QVERIFY(doc.root().isEmpty());
    }

    void fromFile() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("config.yaml"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("sandbox_tools: []\n");
        file.close();
        const YamlDocument doc = YamlDocument::fromFile(path);
        QVERIFY2(doc.isValid(), qPrintable(doc.error()));
        QCOMPARE(doc.root().value(QStringLiteral("sandbox_tools")), QJsonValue(QJsonArray()));

        const YamlDocument missing = YamlDocument::fromFile(dir.filePath(QStringLiteral("nope")));
        QVERIFY(!missing.isValid());
        QVERIFY2(missing.error().startsWith(QStringLiteral("cannot read config ")),
                 qPrintable(missing.error()));
    }
};

QTEST_GUILESS_MAIN(TestYamlDocument)
#include "tst_yamldocument.moc"
