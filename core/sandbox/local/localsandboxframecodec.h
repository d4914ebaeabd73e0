#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace loopscope {

// The wire format between LocalSandboxProcess and resources/sandbox_driver.py: each frame is a
// 4-byte big-endian length followed by that many bytes, usually UTF-8 JSON (one object); a run's
// result header is followed by two raw frames holding its stdout and stderr. Frames travel on the
// interpreter's original stdin/stdout, which the driver keeps private before user code runs, so
// printing can never produce a frame. The decoder refuses frames above a hard cap before
// buffering them, so a misbehaving sandbox cannot make the proxy allocate without bound.
class LocalSandboxFrameCodec {
public:
    explicit LocalSandboxFrameCodec(qint64 maxFrameBytes)
        : m_maxFrameBytes(maxFrameBytes) {}

    static QByteArray encode(const QJsonObject &message);
    // A raw frame (used for the driver source, which is not JSON).
    static QByteArray encodeRaw(const QByteArray &payload);
    // The 4 bytes that precede a payload of `size` bytes: a large payload is sent after them as
    // it is, not copied into one frame.
    static QByteArray frameHeader(qsizetype size);

    // Appends received bytes. Returns false (and stays failed) on an oversized frame.
    bool feed(const QByteArray &bytes);
    // The payload of the next complete frame, if any.
    std::optional<QByteArray> next();
    // `payload` as a JSON object, or nullopt (and error() set) when it is not one.
    std::optional<QJsonObject> parseObject(const QByteArray &payload);

    bool failed() const { return !m_error.isEmpty(); }
    QString error() const { return m_error; }
    qint64 bufferedBytes() const { return m_buffer.size(); }
    qint64 maxFrameBytes() const { return m_maxFrameBytes; }

private:
    qint64 m_maxFrameBytes;
    QByteArray m_buffer;
    QString m_error;
};

} // namespace loopscope
