// The built-in price table (resources/model-prices.json) as FlowRecorder uses it: how model
// names find their row, and what an answer's tokens cost in each dialect's way of counting the
// cache.
#undef QT_NO_CAST_FROM_ASCII
#include "record/modelpricetable.h"

#include <QtTest>

using namespace loopscope;
using Counting = ModelPrice::CacheCounting;

class TestModelPriceTable : public QObject {
    Q_OBJECT
private slots:
    void builtInTableShips() {
        const ModelPriceTable &table = ModelPriceTable::builtIn();
        QVERIFY(table.size() >= 20);
        QVERIFY(!table.source().isEmpty());
        QCOMPARE(table.asOf(), QStringLiteral("2026-12-04"));
    }

    void namesFindTheirRow_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<double>("inputPerMillion"); // < 0: no row
        QTest::newRow("exact") << "gpt-4o" << 2.5;
        QTest::newRow("longest name wins") << "gpt-4o-mini" << 0.15;
        QTest::newRow("dated OpenAI snapshot") << "gpt-4o-mini-2024-07-18" << 0.15;
        QTest::newRow("dated Anthropic snapshot") << "claude-sonnet-4-5-20250929" << 3.0;
        QTest::newRow("Sonnet 4 beside 4.5") << "claude-sonnet-4-20250514" << 3.0;
        QTest::newRow("Opus 4.1 is not Opus 4.5") << "claude-opus-4-1-20250805" << 15.0;
        QTest::newRow("Opus 4.5") << "claude-opus-4-5-20251101" << 5.0;
        QTest::newRow("provider prefix") << "anthropic/claude-haiku-4-5" << 1.0;
        QTest::newRow("openai prefix, case") << "openai/GPT-5" << 1.25;
        QTest::newRow("latest alias") << "claude-3-7-sonnet-latest" << 3.0;
        QTest::newRow("another model that extends a name") << "o3-mini" << -1.0;
        QTest::newRow("a variant that is not a snapshot") << "gpt-4o-audio-preview" << -1.0;
        QTest::newRow("unknown") << "llama3.1:8b" << -1.0;
        QTest::newRow("empty") << "" << -1.0;
    }
    void namesFindTheirRow() {
        QFETCH(QString, model);
        QFETCH(double, inputPerMillion);
        const std::optional<ModelPrice> price = ModelPriceTable::builtIn().find(model);
        if (inputPerMillion < 0) {
            QVERIFY2(!price, qPrintable(model));
            return;
        }
        QVERIFY2(price, qPrintable(model));
        QVERIFY(qAbs(price->inputPerToken - inputPerMillion * 1e-6) < 1e-15);
    }

    void costCountsTheCacheAsTheDialectDoes_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("counting");
        QTest::addColumn<qint64>("input");
        QTest::addColumn<qint64>("output");
        QTest::addColumn<qint64>("cacheRead");
        QTest::addColumn<qint64>("cacheWrite");
        QTest::addColumn<double>("expected");
        // OpenAI: 1000 prompt tokens of which 400 cached; 600 at 0.15, 400 at 0.075, 100 at 0.6.
        QTest::newRow("openai cached inside input")
            << "gpt-4o-mini" << int(Counting::InsideInput) << qint64(1000) << qint64(100)
            << qint64(400) << qint64(0) << (600 * 0.15 + 400 * 0.075 + 100 * 0.6) * 1e-6;
        // Anthropic: 120 uncached, 9000 read, 300 written, 40 out.
        QTest::newRow("anthropic cache beside input")
            << "claude-sonnet-4-5" << int(Counting::BesideInput) << qint64(120) << qint64(40)
            << qint64(9000) << qint64(300) << (120 * 3 + 9000 * 0.3 + 300 * 3.75 + 40 * 15) * 1e-6;
        QTest::newRow("no cache") << "gpt-5" << int(Counting::InsideInput) << qint64(2000)
                                  << qint64(500) << qint64(0) << qint64(0)
                                  << (2000 * 1.25 + 500 * 10) * 1e-6;
    }
    void costCountsTheCacheAsTheDialectDoes() {
        QFETCH(QString, model);
        QFETCH(int, counting);
        QFETCH(qint64, input);
        QFETCH(qint64, output);
        QFETCH(qint64, cacheRead);
        QFETCH(qint64, cacheWrite);
        QFETCH(double, expected);
        const std::optional<ModelPrice> price = ModelPriceTable::builtIn().find(model);
        QVERIFY(price);
        const double cost = price->cost(input, output, cacheRead, cacheWrite, Counting(counting));
        QVERIFY2(qAbs(cost - expected) < 1e-12, qPrintable(QString::number(cost, 'g', 12)));
    }

    // model_info without cache prices: OpenAI-style cached tokens at the input price (no
    // discount assumed); Anthropic-style at Anthropic's published multipliers.
    void cachePricesNotGiven() {
        ModelPrice p;
        p.inputPerToken = 1e-6;
        p.outputPerToken = 2e-6;
        QVERIFY(qAbs(p.cost(1000, 0, 400, 0, Counting::InsideInput) - 1000e-6) < 1e-15);
        QVERIFY(qAbs(p.cost(100, 0, 1000, 100, Counting::BesideInput) -
                     (100 + 1000 * 0.1 + 100 * 1.25) * 1e-6) < 1e-15);
    }

    void rowsWithoutPricesAreLeftOut() {
        const ModelPriceTable t = ModelPriceTable::fromJson(
            {{"models", QJsonObject{{"a", QJsonObject{{"input", 1}, {"output", 2}}},
                                    {"b", QJsonObject{{"input", 1}}},
                                    {"c", QJsonObject{{"input", "1"}, {"output", 2}}}}}});
        QCOMPARE(t.size(), 1);
        QVERIFY(t.find(u"a"));
        QVERIFY(!t.find(u"b"));
        QCOMPARE(t.find(u"a")->cacheReadPerToken, -1.0);
    }
};

QTEST_GUILESS_MAIN(TestModelPriceTable)
#include "tst_modelpricetable.moc"
