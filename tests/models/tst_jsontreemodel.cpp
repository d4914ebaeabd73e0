#include "models/jsontreemodel.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace loopscope;

class TestJsonTreeModel : public QObject {
    Q_OBJECT

private slots:
    void treeMirrorsTheDocument() {
        JsonTreeModel model;
        QAbstractItemModelTester tester(&model);
        QCOMPARE(model.rowCount(), 0);
        const QJsonDocument doc = QJsonDocument::fromJson(
            R"({"id":"resp_1","output":[{"type":"code_interpreter_call","outputs":[{"type":"logs","logs":"42\n"}]},
                {"type":"message","content":[]}],"usage":{"total_tokens":12},"ok":true,"n":null,"pi":3.5})");
        QVERIFY(doc.isObject());
        model.setJson(doc.object());

        QCOMPARE(model.rowCount(), 6); // QJsonObject keeps keys sorted
        const QModelIndex id = model.index(0, JsonTreeModel::KeyColumn);
        QCOMPARE(id.data().toString(), QStringLiteral("id"));
        QCOMPARE(model.index(0, JsonTreeModel::ValueColumn).data().toString(),
                 QStringLiteral("resp_1"));
        QCOMPARE(model.index(0, JsonTreeModel::TypeColumn).data().toString(),
                 QStringLiteral("string"));
        QCOMPARE(model.index(1, JsonTreeModel::ValueColumn).data().toString(),
                 QStringLiteral("null"));
        QCOMPARE(model.index(2, JsonTreeModel::ValueColumn).data().toString(),
                 QStringLiteral("true"));

        const QModelIndex output = model.index(3, 0);
        QCOMPARE(output.data().toString(), QStringLiteral("output"));
        QCOMPARE(model.index(3, JsonTreeModel::ValueColumn).data().toString(),
                 QStringLiteral("[2]"));
        QCOMPARE(model.rowCount(output), 2);
        const QModelIndex call = model.index(0, 0, output);
        QCOMPARE(call.data().toString(), QStringLiteral("0"));
        QCOMPARE(call.parent(), output);
        const QModelIndex outputs = model.index(0, 0, call);
        QCOMPARE(outputs.data().toString(), QStringLiteral("outputs"));
        const QModelIndex logs = model.index(0, 0, model.index(0, 0, outputs));
        QCOMPARE(logs.data().toString(), QStringLiteral("logs"));
        QCOMPARE(
            model.index(logs.row(), JsonTreeModel::ValueColumn, logs.parent()).data().toString(),
            QStringLiteral("42⏎"));
        QCOMPARE(logs.parent().parent().parent().parent(), output);

        // The subtree of any node is available for "copy".
        const QJsonValue sub = call.data(JsonTreeModel::JsonValueRole).value<QJsonValue>();
        QCOMPARE(sub.toObject().value(QLatin1String("type")).toString(),
                 QStringLiteral("code_interpreter_call"));
        QCOMPARE(model.index(4, JsonTreeModel::ValueColumn).data().toString(),
                 QStringLiteral("3.5"));
        QCOMPARE(model.index(5, JsonTreeModel::ValueColumn).data().toString(),
                 QStringLiteral("{1}"));

        // Replacing the document resets; a scalar root has no rows; an array root is indexed.
        model.setJson(QJsonValue(7));
        QCOMPARE(model.rowCount(), 0);
        model.setJson(QJsonArray{1, QStringLiteral("two"), QJsonArray{3}});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.index(1, JsonTreeModel::ValueColumn).data().toString(),
                 QStringLiteral("two"));
        QCOMPARE(model.rowCount(model.index(2, 0)), 1);
    }

    void longStringsAreShortenedInCells() {
        JsonTreeModel model;
        const QString big(1000, u'x');
        model.setJson(QJsonObject{{QStringLiteral("code"), big}});
        const QString shown = model.index(0, JsonTreeModel::ValueColumn).data().toString();
        QCOMPARE(shown.size(), 301);
        QVERIFY(shown.endsWith(QStringLiteral("…")));
        QCOMPARE(
            model.index(0, 0).data(JsonTreeModel::JsonValueRole).value<QJsonValue>().toString(),
            big);
    }
};

QTEST_GUILESS_MAIN(TestJsonTreeModel)
#include "tst_jsontreemodel.moc"
