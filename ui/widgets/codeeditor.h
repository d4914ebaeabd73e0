#pragma once

#include <QPlainTextEdit>

namespace loopscope {

// A read-only monospace text view with a line-number gutter (Qt's "Code Editor" example shape).
class CodeEditor : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit CodeEditor(QWidget *parent = nullptr);

    int lineNumberAreaWidth() const;
    void paintLineNumbers(QPaintEvent *event);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void updateLineNumberAreaWidth();
    void updateLineNumberArea(const QRect &rect, int dy);

    QWidget *m_lineNumberArea;
};

} // namespace loopscope
