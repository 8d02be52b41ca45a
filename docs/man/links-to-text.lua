-- A man page cannot follow links: keep a link's text, drop its target.
function Link(el)
  return el.content
end
