// InjectedPanel::setFlow offscreen: the code_interpreter_call items of the client_response,
// from a JSON body or SSE events, over flows recorded by a real in-memory FlowStore.
#undef QT_NO_CAST_FROM_ASCII
#include "models/conversationflows.h"

#include "widgets/injectedpanel.h"
#include "widgets/jsonview.h"

#include <QLabel>
#include <QtTest>

using namespace loopscope;

class TstInjectedPanel : public QObject {
    Q_OBJECT
private slots:
    void injectedPanel_data() {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<int>("items");
        QTest::newRow("responses loop") << "loop" << 1;
        QTest::newRow("streamed loop") << "stream" << 1;
        QTest::newRow("chat loop") << "chat" << 0;
        QTest::newRow("pass-through") << "pass" << 0;
        QTest::newRow("empty") << "" << 0;
    }

    void injectedPanel() {
        QFETCH(QString, scenario);
        QFETCH(int, items);
        convo::Recorder recorder;
        QJsonObject flow;
        if (scenario == "loop")
            flow = recorder.responsesLoop();
        else if (scenario == "stream")
            flow = recorder.responsesLoop("req_s", true);
        else if (scenario == "chat")
            flow = recorder.chatLoop();
        else if (scenario == "pass")
            flow = recorder.passThrough();
        InjectedPanel panel;
        panel.setFlow(flow);
        QCOMPARE(panel.items().size(), items);
        if (items) {
            const QJsonObject item = panel.items().first().toObject();
            QCOMPARE(item.value("type").toString(), QString("code_interpreter_call"));
            QCOMPARE(item.value("code").toString(), QString("x = 6 * 7\nprint(x)"));
            QVERIFY(panel.jsonView()->prettyText().contains("code_interpreter_call"));
            QVERIFY(panel.summaryLabel()->text().contains("1 code_interpreter_call"));
        } else {
            QCOMPARE(panel.summaryLabel()->text(),
                     QString("No code_interpreter_call items injected"));
        }
    }
};

QTEST_MAIN(TstInjectedPanel)
#include "tst_injectedpanel.moc"
