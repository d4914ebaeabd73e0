#include "models/rawsections.h"
#include "models/requestsmodel.h"
#include "models/sampleevents.h"

#include <QJsonDocument>
#include <QTest>

using namespace loopscope;
namespace s = loopscope::sample;

class TestRawSections : public QObject {
    Q_OBJECT

private slots:
    void sectionsInWireOrderWithSecretsMasked() {
        RequestsModel model;
        QList<InspectorEvent> events = s::fullRequest(QStringLiteral("a"), 1000);
        events[0].data[QStringLiteral("request")] = QJsonObject{
            {QStringLiteral("model"), QStringLiteral("gpt")},
            {QStringLiteral("metadata"),
             QJsonObject{{QStringLiteral("note"), QStringLiteral("sk-proj-ABCDEFGHIJKLMNOP9876")}}},
            {QStringLiteral("headers"),
             QJsonObject{
                 {QStringLiteral("Authorization"), QStringLiteral("Bearer sk-abcdefghijkl5555")},
                 {QStringLiteral("x-forwarded-auth"), QStringLiteral("Bearer abcdefghijkl6666")}}}};
        model.applyEvents(events);
        const QList<RawSections::Section> sections = RawSections::build(*model.record(0));
        QStringList titles;
        for (const auto &section : sections)
            titles.append(section.title);
        QCOMPARE(titles, (QStringList{QStringLiteral("Client request"),
                                      QStringLiteral("Upstream request 1"),
                                      QStringLiteral("Upstream response 1 (HTTP 200, 290 ms)"),
                                      QStringLiteral("Upstream request 2"),
                                      QStringLiteral("Upstream response 2 (HTTP 200, 260 ms)"),
                                      QStringLiteral("Final response (HTTP 200)")}));

        const QByteArray all = [&] {
            QByteArray bytes;
            for (const auto &section : sections)
                bytes += QJsonDocument(section.json.toObject()).toJson();
            return bytes;
        }();
        // Key-named secrets (api_key in the upstream request), header values and key-shaped
        // strings under innocent names: none appears in full, each keeps its last four.
        QVERIFY(!all.contains("sk-test-1234567890abcd"));
        QVERIFY(all.contains("\xe2\x80\xa6"
                             "abcd"));
        QVERIFY(!all.contains("ABCDEFGHIJKLMNOP9876"));
        QVERIFY(all.contains("\xe2\x80\xa6"
                             "9876"));
        QVERIFY(!all.contains("sk-abcdefghijkl5555"));
        QVERIFY(all.contains("\"Bearer \xe2\x80\xa6"
                             "5555\""));
        QVERIFY(!all.contains("abcdefghijkl6666"));
        QVERIFY(all.contains("Bearer \xe2\x80\xa6"
                             "6666"));
        QCOMPARE(sections.last().json.toObject().value(QLatin1String("id")).toString(),
                 QStringLiteral("resp_final_a"));
    }

    void failedRequestEndsWithTheFailure() {
        RequestsModel model;
        model.applyEvents(
            {s::started(QStringLiteral("f"), 0),
             s::failed(QStringLiteral("f"), 5, 502, QStringLiteral("upstream down"))});
        const auto sections = RawSections::build(*model.record(0));
        QCOMPARE(sections.size(), 2);
        QCOMPARE(sections.last().title, QStringLiteral("Failure"));
        QCOMPARE(sections.last().json.toObject().value(QLatin1String("message")).toString(),
                 QStringLiteral("upstream down"));
    }

    void droppedPayloadsAreExplained() {
        RequestsModel model;
        model.setPayloadRetention(1);
        model.applyEvents(s::fullRequest(QStringLiteral("old"), 0));
        model.applyEvents(s::fullRequest(QStringLiteral("new"), 5000));
        const auto old = RawSections::build(*model.recordById(QStringLiteral("old")));
        QCOMPARE(old.first().title, QStringLiteral("Payloads dropped"));
        QVERIFY(old.at(1).json.toObject().isEmpty()); // the client request is gone
        const auto fresh = RawSections::build(*model.recordById(QStringLiteral("new")));
        QCOMPARE(fresh.first().title, QStringLiteral("Client request"));
    }

    void looksLikeSecret_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("secret");
        QTest::newRow("openai key") << QStringLiteral("sk-abcdefghijklmnop") << true;
        QTest::newRow("project key") << QStringLiteral("sk-proj-abc_DEF-123456") << true;
        QTest::newRow("bearer") << QStringLiteral("Bearer abcdefghijkl") << true;
        QTest::newRow("sentence mentioning sk-")
            << QStringLiteral("use sk-abcdefghijkl as key") << false;
        QTest::newRow("short sk") << QStringLiteral("sk-abc") << false;
        QTest::newRow("code") << QStringLiteral("print(6*7)") << false;
        QTest::newRow("empty") << QString() << false;
    }

    void looksLikeSecret() {
        QFETCH(QString, text);
        QFETCH(bool, secret);
        QCOMPARE(RawSections::looksLikeSecret(text), secret);
    }
};

QTEST_GUILESS_MAIN(TestRawSections)
#include "tst_rawsections.moc"
