#include "sandbox/local/localsandboxframecodec.h"

#include <QJsonDocument>
#include <QJsonParseError>
#include <QtEndian>

namespace loopscope {

namespace {
constexpr qsizetype kHeaderBytes = 4;
}

QByteArray LocalSandboxFrameCodec::frameHeader(qsizetype size) {
    QByteArray header(kHeaderBytes, Qt::Uninitialized);
    qToBigEndian<quint32>(static_cast<quint32>(size), header.data());
    return header;
}

QByteArray LocalSandboxFrameCodec::encodeRaw(const QByteArray &payload) {
    return frameHeader(payload.size()) + payload;
}

QByteArray LocalSandboxFrameCodec::encode(const QJsonObject &message) {
    return encodeRaw(QJsonDocument(message).toJson(QJsonDocument::Compact));
}

bool LocalSandboxFrameCodec::feed(const QByteArray &bytes) {
    if (failed())
        return false;
    m_buffer.append(bytes);
    if (m_buffer.size() >= kHeaderBytes) {
        const quint32 size = qFromBigEndian<quint32>(m_buffer.constData());
        if (static_cast<qint64>(size) > m_maxFrameBytes) {
            m_error = QStringLiteral("sandbox sent a %1-byte frame; the limit is %2 bytes")
                          .arg(size)
                          .arg(m_maxFrameBytes);
            m_buffer.clear();
            return false;
        }
    }
    return true;
}

std::optional<QByteArray> LocalSandboxFrameCodec::next() {
    if (failed() || m_buffer.size() < kHeaderBytes)
        return std::nullopt;
    const quint32 size = qFromBigEndian<quint32>(m_buffer.constData());
    if (static_cast<qint64>(size) > m_maxFrameBytes) {
        m_error = QStringLiteral("sandbox sent a %1-byte frame; the limit is %2 bytes")
                      .arg(size)
                      .arg(m_maxFrameBytes);
        m_buffer.clear();
        return std::nullopt;
    }
    if (m_buffer.size() < kHeaderBytes + static_cast<qsizetype>(size))
        return std::nullopt;
    QByteArray payload = m_buffer.mid(kHeaderBytes, size);
    m_buffer.remove(0, kHeaderBytes + size);
    return payload;
}

std::optional<QJsonObject> LocalSandboxFrameCodec::parseObject(const QByteArray &payload) {
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(payload, &parseError);
    if (parseError.error != QJsonParseError::NoError || !doc.isObject()) {
        m_error = QStringLiteral("sandbox sent a frame that is not a JSON object: %1")
                      .arg(parseError.errorString());
        m_buffer.clear();
        return std::nullopt;
    }
    return doc.object();
}

} // namespace loopscope
