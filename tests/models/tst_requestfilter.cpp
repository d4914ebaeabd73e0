#include "models/requestfilter.h"
#include "models/requestfilterproxymodel.h"
#include "models/requestsmodel.h"
#include "models/sampleevents.h"

#include <QAbstractItemModelTester>
#include <QTest>

using namespace loopscope;
namespace s = loopscope::sample;

namespace {

// Five requests covering every filter dimension:
//  ok1   responses, completed, code "print(6*7)", session sess-A
//  ok2   chat,      completed, no code
//  fail  responses, failed 502 "upstream timed out", no code
//  run   chat,      running, code "import numpy", session sess-B
//  err   responses, completed, code raising ZeroDivisionError
QList<InspectorEvent> corpus() {
    QList<InspectorEvent> e = s::fullRequest(QStringLiteral("ok1"), 1000, QStringLiteral("sbx_a"),
                                             QStringLiteral("sess-A"));
    e << s::started(QStringLiteral("ok2"), 2000, QStringLiteral("chat_completions"),
                    QStringLiteral("llama3"))
      << s::upstream(QStringLiteral("ok2"), 0, 2100, 90)
      << s::finished(QStringLiteral("ok2"), 2101, 101, 1, 0);
    e << s::started(QStringLiteral("fail"), 3000)
      << s::failed(QStringLiteral("fail"), 3100, 502, QStringLiteral("upstream timed out"));
    e << s::started(QStringLiteral("run"), 4000, QStringLiteral("chat_completions"),
                    QStringLiteral("gpt-4o"), QStringLiteral("sess-B"))
      << s::upstream(QStringLiteral("run"), 0, 4100, 90)
      << s::code(QStringLiteral("run"), 0, 4200, QStringLiteral("import numpy\nprint(numpy.pi)"),
                 QStringLiteral("3.14159\n"), QStringLiteral("sbx_b"), 40,
                 QStringLiteral("sess-B"));
    e << s::started(QStringLiteral("err"), 5000) << s::upstream(QStringLiteral("err"), 0, 5100, 90)
      << s::codeError(QStringLiteral("err"), 0, 5110, QStringLiteral("1/0"),
                      QStringLiteral("sbx_c"))
      << s::finished(QStringLiteral("err"), 5300, 300, 2, 1);
    return e;
}

QStringList idsOf(const RequestFilterProxyModel &proxy) {
    QStringList ids;
    for (int row = 0; row < proxy.rowCount(); ++row)
        ids.append(proxy.requestIdAt(row));
    return ids;
}

} // namespace

class TestRequestFilter : public QObject {
    Q_OBJECT

private slots:
    void matches_data() {
        QTest::addColumn<RequestFilter>("filter");
        QTest::addColumn<QStringList>("expected");
        using F = RequestFilter;
        const QStringList all{QStringLiteral("ok1"), QStringLiteral("ok2"), QStringLiteral("fail"),
                              QStringLiteral("run"), QStringLiteral("err")};
        QTest::newRow("empty") << F{} << all;
        QTest::newRow("api responses")
            << F{{}, QStringLiteral("responses"), F::Status::Any, F::Code::Any, {}}
            << QStringList{QStringLiteral("ok1"), QStringLiteral("fail"), QStringLiteral("err")};
        QTest::newRow("api chat")
            << F{{}, QStringLiteral("chat_completions"), F::Status::Any, F::Code::Any, {}}
            << QStringList{QStringLiteral("ok2"), QStringLiteral("run")};
        QTest::newRow("running") << F{{}, {}, F::Status::Running, F::Code::Any, {}}
                                 << QStringList{QStringLiteral("run")};
        QTest::newRow("failed") << F{{}, {}, F::Status::Failed, F::Code::Any, {}}
                                << QStringList{QStringLiteral("fail")};
        QTest::newRow("completed")
            << F{{}, {}, F::Status::Completed, F::Code::Any, {}}
            << QStringList{QStringLiteral("ok1"), QStringLiteral("ok2"), QStringLiteral("err")};
        QTest::newRow("with code")
            << F{{}, {}, F::Status::Any, F::Code::WithCode, {}}
            << QStringList{QStringLiteral("ok1"), QStringLiteral("run"), QStringLiteral("err")};
        QTest::newRow("without code") << F{{}, {}, F::Status::Any, F::Code::WithoutCode, {}}
                                      << QStringList{QStringLiteral("ok2"), QStringLiteral("fail")};
        QTest::newRow("session")
            << F{{}, {}, F::Status::Any, F::Code::Any, QStringLiteral("sess-B")}
            << QStringList{QStringLiteral("run")};
        QTest::newRow("text model")
            << F{QStringLiteral("LLAMA"), {}, F::Status::Any, F::Code::Any, {}}
            << QStringList{QStringLiteral("ok2")};
        QTest::newRow("text code")
            << F{QStringLiteral("numpy"), {}, F::Status::Any, F::Code::Any, {}}
            << QStringList{QStringLiteral("run")};
        QTest::newRow("text stdout")
            << F{QStringLiteral("3.14159"), {}, F::Status::Any, F::Code::Any, {}}
            << QStringList{QStringLiteral("run")};
        QTest::newRow("text error name")
            << F{QStringLiteral("zerodivision"), {}, F::Status::Any, F::Code::Any, {}}
            << QStringList{QStringLiteral("err")};
        QTest::newRow("text failure message")
            << F{QStringLiteral("timed out"), {}, F::Status::Any, F::Code::Any, {}}
            << QStringList{QStringLiteral("fail")};
        QTest::newRow("text status")
            << F{QStringLiteral("502"), {}, F::Status::Any, F::Code::Any, {}}
            << QStringList{QStringLiteral("fail")};
        QTest::newRow("text container")
            << F{QStringLiteral("sbx_c"), {}, F::Status::Any, F::Code::Any, {}}
            << QStringList{QStringLiteral("err")};
        QTest::newRow("text blank is no filter")
            << F{QStringLiteral("   "), {}, F::Status::Any, F::Code::Any, {}} << all;
        QTest::newRow("combined") << F{QStringLiteral("print"), QStringLiteral("responses"),
                                       F::Status::Completed, F::Code::WithCode,
                                       QStringLiteral("sess-A")}
                                  << QStringList{QStringLiteral("ok1")};
        QTest::newRow("nothing")
            << F{QStringLiteral("no such thing"), {}, F::Status::Any, F::Code::Any, {}}
            << QStringList{};
    }

    void matches() {
        QFETCH(RequestFilter, filter);
        QFETCH(QStringList, expected);
        RequestsModel model;
        model.applyEvents(corpus());
        QCOMPARE(model.rowCount(), 5);

        // The predicate on its own...
        QStringList direct;
        for (int row = 0; row < model.rowCount(); ++row) {
            if (filter.matches(*model.record(row)))
                direct.append(model.record(row)->id);
        }
        QCOMPARE(direct, expected);
        QCOMPARE(filter.isEmpty(), expected.size() == 5);

        // ...and the proxy that delegates to it.
        RequestFilterProxyModel proxy;
        QAbstractItemModelTester tester(&proxy);
        proxy.setRequestsModel(&model);
        proxy.setFilter(filter);
        QCOMPARE(idsOf(proxy), expected);
    }

    void proxyFollowsLiveEvents() {
        RequestsModel model;
        RequestFilterProxyModel proxy;
        QAbstractItemModelTester sourceTester(&model);
        QAbstractItemModelTester tester(&proxy);
        proxy.setRequestsModel(&model);
        RequestFilter onlyFailed;
        onlyFailed.status = RequestFilter::Status::Failed;
        proxy.setFilter(onlyFailed);

        model.applyEvents(
            {s::started(QStringLiteral("a"), 10), s::started(QStringLiteral("b"), 11)});
        QCOMPARE(proxy.rowCount(), 0);
        // A running request that fails moves into the filtered view on its own.
        model.applyEvents({s::failed(QStringLiteral("b"), 20, 500, QStringLiteral("boom"))});
        QCOMPARE(idsOf(proxy), QStringList{QStringLiteral("b")});

        // Sorting by duration uses the raw value, not the display text.
        proxy.setFilter({});
        model.applyEvents({s::finished(QStringLiteral("a"), 30, 1500, 1, 0)});
        proxy.sort(RequestsModel::DurationColumn, Qt::DescendingOrder);
        QCOMPARE(idsOf(proxy), (QStringList{QStringLiteral("a"), QStringLiteral("b")}));

        model.setRetentionLimit(1);
        QCOMPARE(idsOf(proxy), QStringList{QStringLiteral("b")});
        model.clear();
        QCOMPARE(proxy.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestRequestFilter)
#include "tst_requestfilter.moc"
