#!/usr/bin/env python3
"""Reads a page of `mpquery report` (or chromium's --dump-dom of it) with
python3's html.parser, for tests/mpquery/report.sh:

  report_page.py FILE refs            every reference the page makes to
                                      something outside it, one a line
                                      (none: nothing printed)
  report_page.py FILE addresses       every network or file address in
                                      the file's text, even in names
  report_page.py FILE balance         element counts that differ between
                                      start and end tags
  report_page.py FILE cards           the summary's cards: label|value|exact|note
  report_page.py FILE rows GROUP TAB  a tab's table, a row a line, cells
                                      joined by '|' as TEXT or TEXT=TITLE
                                      when the cell has a tooltip (its
                                      lines joined by ' / ')
  report_page.py FILE table ID N      the N-th table (from 0) of a section
  report_page.py FILE flames          per flame graph: its id prefix, frames,
                                      the root's value, and the names of
                                      the frames (in document order)
  report_page.py FILE panes GROUP     per pane of a tab group: TAB shown|hidden
  report_page.py FILE buttons GROUP   per tab button of a group: TAB on|off TEXT
  report_page.py FILE text ID         the text of the element with that id
"""
import re
import sys
from html.parser import HTMLParser

VOID = {'meta', 'link', 'br', 'img', 'input', 'hr', 'area', 'base', 'col', 'embed', 'source', 'track', 'wbr'}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self):
        return ''.join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self, tag=None):
        for c in self.children:
            if isinstance(c, Node):
                if tag is None or c.tag == tag:
                    yield c
                yield from c.iter(tag)

    def has_class(self, name):
        return name in self.attrs.get('class', '').split()


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node('#document', {}, None)
        self.cur = self.root
        self.starts, self.ends = {}, {}

    def handle_starttag(self, tag, attrs):
        self.starts[tag] = self.starts.get(tag, 0) + 1
        node = Node(tag, attrs, self.cur)
        self.cur.children.append(node)
        if tag in VOID:
            self.ends[tag] = self.ends.get(tag, 0) + 1
        else:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.starts[tag] = self.starts.get(tag, 0) + 1
        self.ends[tag] = self.ends.get(tag, 0) + 1
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        self.ends[tag] = self.ends.get(tag, 0) + 1
        node = self.cur
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.cur = node.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def load(path):
    t = Tree()
    with open(path, encoding='utf-8') as f:   # fails on invalid UTF-8
        t.feed(f.read())
    t.close()
    return t


def refs(t):
    """References to something outside the page: what an attribute other
    than a tooltip (title) names, elements that load things, and url(),
    @import or an address in a style or script element."""
    out = []
    for n in t.root.iter():
        for k, v in n.attrs.items():
            v = v or ''
            if k in ('src', 'srcset', 'action', 'data', 'xlink:href', 'poster', 'background', 'formaction'):
                out.append(f'{n.tag} {k}={v}')
            elif k == 'href' and not v.startswith('#'):
                out.append(f'{n.tag} href={v}')
            elif k != 'title' and re.search(r'url\(|@import|https?:|javascript:', v):
                out.append(f'{n.tag} {k}={v}')
        if n.tag in ('link', 'img', 'iframe', 'frame', 'object', 'embed', 'image', 'use', 'audio', 'video',
                     'base', 'source', 'track', 'picture', 'foreignobject'):
            out.append(f'element {n.tag}')
        if n.tag in ('style', 'script'):
            for m in re.finditer(r'url\(|@import|@font-face|https?:', n.text()):
                out.append(f'{n.tag}: {n.text()[max(0, m.start() - 30):m.end() + 30]}')
    return out


def cell(td):
    text = ' '.join(td.text().split())
    return f'{text}={" / ".join(td.attrs["title"].split(chr(10)))}' if 'title' in td.attrs else text


def rows(table):
    for tr in table.iter('tr'):
        cells = [c for c in tr.children if isinstance(c, Node) and c.tag in ('td', 'th')]
        if cells:
            print('|'.join(cell(c) for c in cells))


def main():
    path, what, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    t = load(path)
    if what == 'refs':
        for r in refs(t):
            print(r)
    elif what == 'addresses':
        raw = open(path, encoding='utf-8').read()
        for m in re.finditer(r'https?:|(ftp|file)://|//[a-z0-9.-]+\.[a-z]{2,}/', raw):
            print(raw[max(0, m.start() - 30):m.end() + 30].replace('\n', ' '))
    elif what == 'balance':
        for tag in sorted(set(t.starts) | set(t.ends)):
            if t.starts.get(tag, 0) != t.ends.get(tag, 0):
                print(tag, t.starts.get(tag, 0), t.ends.get(tag, 0))
    elif what == 'cards':
        for c in t.root.iter('div'):
            if c.has_class('card'):
                parts = {d.attrs.get('class'): d for d in c.iter('div')}
                v = parts.get('v')
                print('|'.join([parts['k'].text(), v.text() if v else '', v.attrs.get('title', '') if v else '',
                                parts['x'].text() if 'x' in parts else '']))
    elif what == 'rows':
        for p in t.root.iter('div'):
            if p.has_class('pane') and p.attrs.get('data-group') == args[0] and p.attrs.get('data-tab') == args[1]:
                for h in p.iter('h3'):
                    print('#', h.text())
                rows(next(p.iter('table')))
    elif what == 'table':
        sec = [s for s in t.root.iter('section') if s.attrs.get('id') == args[0]][0]
        rows(list(sec.iter('table'))[int(args[1])])
    elif what == 'flames':
        for svg in t.root.iter('svg'):
            if not svg.has_class('flame'):
                continue
            group = [g for g in svg.iter('g') if g.has_class('frames')][0]
            frames = [g for g in group.children if isinstance(g, Node) and g.tag == 'g']
            names = [next(f.iter('title')).text().split('\n')[0] for f in frames]
            print(svg.attrs.get('data-id-prefix'), len(frames), frames[0].attrs.get('data-v') if frames else '-',
                  ','.join(names))
    elif what == 'panes':
        for p in t.root.iter('div'):
            if p.has_class('pane') and p.attrs.get('data-group') == args[0]:
                print(p.attrs['data-tab'], 'hidden' if 'hidden' in p.attrs else 'shown')
    elif what == 'buttons':
        for bar in t.root.iter('div'):
            if bar.has_class('tabs') and bar.attrs.get('data-group') == args[0]:
                for b in bar.iter('button'):
                    print(b.attrs['data-tab'], 'on' if b.has_class('on') else 'off', b.text())
    elif what == 'text':
        for n in t.root.iter():
            if n.attrs.get('id') == args[0]:
                print(' '.join(n.text().split()))
    else:
        sys.exit(f'report_page.py: unknown request {what}')


main()
