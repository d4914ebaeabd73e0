#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QHash>
#include <QJsonValue>
#include <QList>
#include <QString>

namespace loopscope {

// Parses the JSON the store wrote, sharing what repeats. An agent resends its whole history
// every turn, so a run's requests carry the same system prompt, tool list and earlier messages
// again and again: a value of kShareBytes or more is looked up by its exact text (hashed) among
// the values parsed lately and, when found, reused as it is (Qt's JSON containers are
// implicitly shared) instead of being parsed again; a large array (or an object with a large
// member) is split into its parts first, so a new message at the end of a long history costs
// only itself.
// Also reads the structure of JSON text without parsing it (an object's members, an array's
// elements), to pick parts out of a stored flow. Not thread-safe: one per read.
class SharedJsonParser {
public:
    // Containers this large are split into their parts; parts this small are parsed every time
    // (their lookup would cost about as much).
    static constexpr qsizetype kSplitBytes = 1024;
    static constexpr qsizetype kShareBytes = 64;
    // Values unused for this many generations (flows, see nextGeneration) are forgotten.
    static constexpr int kKeepGenerations = 8;

    // The value `json` holds (Undefined when it is not JSON). The value itself is never kept
    // for reuse, only its large parts: a whole request differs from the last one.
    QJsonValue parse(QByteArrayView json);
    // The value `json` holds, parsed whole by Qt and shared with nothing (what never repeats:
    // an answer).
    static QJsonValue parseOnce(QByteArrayView json);
    // One flow is done: forgets what the last kKeepGenerations did not use.
    void nextGeneration();
    qsizetype cachedValues() const { return m_cache.size(); }
    qsizetype reused() const { return m_reused; }

    struct Member {
        QByteArrayView key; // as written, without its quotes
        QByteArrayView value;
    };
    // An object's members / an array's elements as written; empty when `json` is not one (or
    // is malformed).
    static QList<Member> members(QByteArrayView json);
    static QList<QByteArrayView> elements(QByteArrayView json);
    // The members of each element of an array of objects, in one pass (a flow's hops); empty
    // when `json` is not one.
    static QList<QList<Member>> objects(QByteArrayView json);
    // A key as written (escapes and all) as text.
    static QString keyText(QByteArrayView key);

private:
    struct Cached {
        QJsonValue value;
        quint64 used = 0;
    };
    QJsonValue parseValue(QByteArrayView json, bool keep);

    QHash<QByteArray, Cached> m_cache; // the value's exact text → the value
    quint64 m_generation = 0;
    qsizetype m_reused = 0;
};

} // namespace loopscope
