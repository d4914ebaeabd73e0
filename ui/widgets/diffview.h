#pragma once

#include "models/flowdiff.h"

#include <QJsonObject>
#include <QWidget>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QStackedWidget;

namespace loopscope {

// A line diff of two texts, side by side (rows aligned, a changed line opposite its
// replacement) or unified ("+ " / "- " prefixes). Added and removed lines are tinted with
// colours mixed from the palette's base, so light and dark themes both read well.
class DiffView : public QWidget {
    Q_OBJECT
public:
    enum class Mode { SideBySide, Unified };

    explicit DiffView(QWidget *parent = nullptr);

    void setTexts(const QString &left, const QString &right, const QString &leftTitle = {},
                  const QString &rightTitle = {});
    void setSides(const FlowDiff::Sides &sides);
    // What was sent and replied at iteration `left` vs `right` (0-based) of one flow.
    void compareIterations(const QJsonObject &flow, int left, int right);
    // The conversations of two flows (spec flow JSON, summary + hops).
    void compareFlows(const QJsonObject &left, const QJsonObject &right);

    void setMode(Mode mode);
    Mode mode() const { return m_mode; }

    int addedCount() const { return m_added; }
    int removedCount() const { return m_removed; }
    QString summary() const;
    QString unifiedText() const; // as the unified pane shows it
    QPlainTextEdit *leftView() const { return m_left; }
    QPlainTextEdit *rightView() const { return m_right; }
    QPlainTextEdit *unifiedView() const { return m_unified; }
    QPushButton *closeButton() const { return m_close; } // shown only in a window of its own

    // A non-modal window (deleted on close, a Close button, Esc closes it) showing one
    // comparison: the window's "Compare" actions call these.
    static DiffView *openWindow(QWidget *parent, const FlowDiff::Sides &sides);
    static DiffView *openIterations(QWidget *parent, const QJsonObject &flow, int left, int right);
    static DiffView *openFlows(QWidget *parent, const QJsonObject &left, const QJsonObject &right);

protected:
    void changeEvent(QEvent *event) override;      // re-tints on a palette (theme) change
    void keyPressEvent(QKeyEvent *event) override; // Esc closes a window of its own

private:
    void setRows(const QList<TextDiff::Line> &rows, const QString &leftTitle,
                 const QString &rightTitle);
    void render();

    QLabel *m_summary;
    QComboBox *m_modeBox;
    QLabel *m_leftTitle;
    QLabel *m_rightTitle;
    QStackedWidget *m_stack;
    QPlainTextEdit *m_left;
    QPlainTextEdit *m_right;
    QPlainTextEdit *m_unified;
    QPushButton *m_close;
    QList<TextDiff::Line> m_rows;
    Mode m_mode = Mode::SideBySide;
    int m_added = 0;
    int m_removed = 0;
    bool m_rendering = false;
};

} // namespace loopscope
