// ResponseChainStore: what serves previous_response_id and conversation on bridged routes.
// Chains are walked oldest first, a forgotten turn anywhere in a chain makes it not found (never
// half a conversation), and the bounds hold.
#undef QT_NO_CAST_FROM_ASCII // expectations as plain literals
#include "upstream/responsechainstore.h"

#include <QJsonObject>
#include <QtTest>

using namespace loopscope;

namespace {

QJsonArray turn(const QString &text) {
    return {QJsonObject{{QStringLiteral("type"), QStringLiteral("message")},
                        {QStringLiteral("role"), QStringLiteral("user")},
                        {QStringLiteral("content"), text}}};
}

QStringList texts(const QJsonArray &items) {
    QStringList out;
    for (const QJsonValue &item : items)
        out << item.toObject().value(QStringLiteral("content")).toString();
    return out;
}

} // namespace

class TstResponseChainStore : public QObject {
    Q_OBJECT
private slots:
    void chainsAreWalkedOldestFirst() {
        ResponseChainStore store;
        store.add(QStringLiteral("r1"), {}, turn(QStringLiteral("a")));
        store.add(QStringLiteral("r2"), QStringLiteral("r1"), turn(QStringLiteral("b")));
        store.add(QStringLiteral("r3"), QStringLiteral("r2"), turn(QStringLiteral("c")));
        store.add(QStringLiteral("x2"), QStringLiteral("r1"), turn(QStringLiteral("fork")));
        QCOMPARE(texts(*store.chain(QStringLiteral("r3"))), (QStringList{"a", "b", "c"}));
        QCOMPARE(texts(*store.chain(QStringLiteral("x2"))), (QStringList{"a", "fork"}));
        QString missing;
        QVERIFY(!store.chain(QStringLiteral("nope"), &missing));
        QCOMPARE(missing, QStringLiteral("nope"));
    }
    void aForgottenAncestorMakesTheChainNotFound() {
        ResponseChainStore store;
        store.add(QStringLiteral("r0"), {}, turn(QStringLiteral("first")));
        QString previous = QStringLiteral("r0");
        for (int i = 1; i <= ResponseChainStore::kMaxResponses; ++i) {
            const QString id = QStringLiteral("r%1").arg(i);
            store.add(id, previous, turn(QString::number(i)));
            previous = id;
        }
        QCOMPARE(store.size(), ResponseChainStore::kMaxResponses);
        QVERIFY(!store.contains(QStringLiteral("r0")));
        QString missing;
        QVERIFY(!store.chain(previous, &missing));
        QCOMPARE(missing, QStringLiteral("r0"));
        // A chain that starts after the forgotten turn is whole.
        store.add(QStringLiteral("fresh"), {}, turn(QStringLiteral("new")));
        QCOMPARE(texts(*store.chain(QStringLiteral("fresh"))), QStringList{"new"});
    }
    void bytesAreBounded() {
        ResponseChainStore store;
        const QString big(1024 * 1024, u'x');
        for (int i = 0; i < 200; ++i)
            store.add(QStringLiteral("b%1").arg(i), {}, turn(big));
        QVERIFY(store.bytes() <= ResponseChainStore::kMaxBytes);
        QVERIFY(store.contains(QStringLiteral("b199")));
        QVERIFY(!store.contains(QStringLiteral("b0")));
    }
    void conversationsFollowTheirHead() {
        ResponseChainStore store;
        QVERIFY(store.conversationHead(QStringLiteral("conv_1")).isEmpty());
        store.add(QStringLiteral("r1"), {}, turn(QStringLiteral("a")));
        store.setConversationHead(QStringLiteral("conv_1"), QStringLiteral("r1"));
        QCOMPARE(store.conversationHead(QStringLiteral("conv_1")), QStringLiteral("r1"));
    }
};

QTEST_APPLESS_MAIN(TstResponseChainStore)
#include "tst_responsechainstore.moc"
