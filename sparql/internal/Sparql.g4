// SPARQL 1.1 Query and Update, written from the W3C grammar (SPARQL 1.1
// Query Language §19.8 and SPARQL 1.1 Update §19) for ANTLR 4. Rule names
// follow the specification's productions (lower camel case). Keywords are
// case-insensitive except 'a'. Regenerate with `make generate`.
grammar Sparql;

options { caseInsensitive = true; }

// ---------------------------------------------------------------- entry points

queryUnit : query EOF ;
updateUnit : update EOF ;

query : prologue ( selectQuery | constructQuery | describeQuery | askQuery ) valuesClause ;

prologue : ( baseDecl | prefixDecl )* ;
baseDecl : BASE IRIREF ;
prefixDecl : PREFIX PNAME_NS IRIREF ;

selectQuery : selectClause datasetClause* whereClause solutionModifier ;
subSelect : selectClause whereClause solutionModifier valuesClause ;
selectClause : SELECT ( DISTINCT | REDUCED )? ( selectVar+ | '*' ) ;
selectVar : var | '(' expression AS var ')' ;
constructQuery : CONSTRUCT ( constructTemplate datasetClause* whereClause solutionModifier
                           | datasetClause* WHERE '{' triplesTemplate? '}' solutionModifier ) ;
describeQuery : DESCRIBE ( varOrIri+ | '*' ) datasetClause* whereClause? solutionModifier ;
askQuery : ASK datasetClause* whereClause solutionModifier ;
datasetClause : FROM NAMED? iri ;
whereClause : WHERE? groupGraphPattern ;
solutionModifier : groupClause? havingClause? orderClause? limitOffsetClauses? ;
groupClause : GROUP BY groupCondition+ ;
groupCondition : builtInCall | functionCall | '(' expression ( AS var )? ')' | var ;
havingClause : HAVING constraint+ ;
orderClause : ORDER BY orderCondition+ ;
orderCondition : ( ASC | DESC ) brackettedExpression | constraint | var ;
limitOffsetClauses : limitClause offsetClause? | offsetClause limitClause? ;
limitClause : LIMIT INTEGER ;
offsetClause : OFFSET INTEGER ;
valuesClause : ( VALUES dataBlock )? ;

// ---------------------------------------------------------------- update

update : prologue ( update1 ( ';' prologue update1 )* ( ';' prologue )? )? ;
update1 : load | clear | drop | add | move | copy | create
        | insertData | deleteData | deleteWhere | modify ;
load : LOAD SILENT? iri ( INTO graphRef )? ;
clear : CLEAR SILENT? graphRefAll ;
drop : DROP SILENT? graphRefAll ;
create : CREATE SILENT? graphRef ;
add : ADD SILENT? graphOrDefault TO graphOrDefault ;
move : MOVE SILENT? graphOrDefault TO graphOrDefault ;
copy : COPY SILENT? graphOrDefault TO graphOrDefault ;
insertData : INSERT DATA quadData ;
deleteData : DELETE DATA quadData ;
deleteWhere : DELETE WHERE quadPattern ;
modify : ( WITH iri )? ( deleteClause insertClause? | insertClause ) usingClause* WHERE groupGraphPattern ;
deleteClause : DELETE quadPattern ;
insertClause : INSERT quadPattern ;
usingClause : USING NAMED? iri ;
graphOrDefault : DEFAULT | GRAPH? iri ;
graphRef : GRAPH iri ;
graphRefAll : graphRef | DEFAULT | NAMED | ALL ;
quadPattern : '{' quads '}' ;
quadData : '{' quads '}' ;
quads : triplesTemplate? ( quadsNotTriples '.'? triplesTemplate? )* ;
quadsNotTriples : GRAPH varOrIri '{' triplesTemplate? '}' ;
triplesTemplate : triplesSameSubject ( '.' triplesSameSubject? )* ;

// ---------------------------------------------------------------- graph patterns

groupGraphPattern : '{' ( subSelect | groupGraphPatternSub ) '}' ;
groupGraphPatternSub : triplesBlock? ( graphPatternNotTriples '.'? triplesBlock? )* ;
triplesBlock : triplesSameSubjectPath ( '.' triplesSameSubjectPath? )* ;
graphPatternNotTriples : groupOrUnionGraphPattern | optionalGraphPattern | minusGraphPattern
                       | graphGraphPattern | serviceGraphPattern | filter | bind | inlineData ;
optionalGraphPattern : OPTIONAL groupGraphPattern ;
graphGraphPattern : GRAPH varOrIri groupGraphPattern ;
serviceGraphPattern : SERVICE SILENT? varOrIri groupGraphPattern ;
bind : BIND '(' expression AS var ')' ;
inlineData : VALUES dataBlock ;
dataBlock : inlineDataOneVar | inlineDataFull ;
inlineDataOneVar : var '{' dataBlockValue* '}' ;
inlineDataFull : ( NIL | '(' var* ')' ) '{' ( '(' dataBlockValue* ')' | NIL )* '}' ;
dataBlockValue : iri | rdfLiteral | numericLiteral | booleanLiteral | UNDEF ;
minusGraphPattern : MINUS groupGraphPattern ;
groupOrUnionGraphPattern : groupGraphPattern ( UNION groupGraphPattern )* ;
filter : FILTER constraint ;
constraint : brackettedExpression | builtInCall | functionCall ;
functionCall : iri argList ;
argList : NIL | '(' DISTINCT? expression ( ',' expression )* ')' ;
expressionList : NIL | '(' expression ( ',' expression )* ')' ;

// ---------------------------------------------------------------- triples

constructTemplate : '{' constructTriples? '}' ;
constructTriples : triplesSameSubject ( '.' triplesSameSubject? )* ;
triplesSameSubject : varOrTerm propertyListNotEmpty | triplesNode propertyList ;
propertyList : propertyListNotEmpty? ;
propertyListNotEmpty : verb objectList ( ';' ( verb objectList )? )* ;
verb : varOrIri | A ;
objectList : object ( ',' object )* ;
object : graphNode ;
triplesSameSubjectPath : varOrTerm propertyListPathNotEmpty | triplesNodePath propertyListPath ;
propertyListPath : propertyListPathNotEmpty? ;
propertyListPathNotEmpty : ( verbPath | verbSimple ) objectListPath ( ';' ( ( verbPath | verbSimple ) objectList )? )* ;
verbPath : path ;
verbSimple : var ;
objectListPath : objectPath ( ',' objectPath )* ;
objectPath : graphNodePath ;
path : pathAlternative ;
pathAlternative : pathSequence ( '|' pathSequence )* ;
pathSequence : pathEltOrInverse ( '/' pathEltOrInverse )* ;
pathElt : pathPrimary pathMod? ;
pathEltOrInverse : pathElt | '^' pathElt ;
pathMod : '?' | '*' | '+' ;
pathPrimary : iri | A | '!' pathNegatedPropertySet | '(' path ')' ;
pathNegatedPropertySet : pathOneInPropertySet | '(' ( pathOneInPropertySet ( '|' pathOneInPropertySet )* )? ')' ;
pathOneInPropertySet : iri | A | '^' ( iri | A ) ;
triplesNode : collection | blankNodePropertyList ;
blankNodePropertyList : '[' propertyListNotEmpty ']' ;
triplesNodePath : collectionPath | blankNodePropertyListPath ;
blankNodePropertyListPath : '[' propertyListPathNotEmpty ']' ;
collection : '(' graphNode+ ')' ;
collectionPath : '(' graphNodePath+ ')' ;
graphNode : varOrTerm | triplesNode ;
graphNodePath : varOrTerm | triplesNodePath ;
varOrTerm : var | graphTerm ;
varOrIri : var | iri ;
var : VAR1 | VAR2 ;
graphTerm : iri | rdfLiteral | numericLiteral | booleanLiteral | blankNode | NIL ;

// ---------------------------------------------------------------- expressions

expression : conditionalOrExpression ;
conditionalOrExpression : conditionalAndExpression ( '||' conditionalAndExpression )* ;
conditionalAndExpression : valueLogical ( '&&' valueLogical )* ;
valueLogical : relationalExpression ;
relationalExpression : numericExpression ( op=( '=' | '!=' | '<' | '>' | '<=' | '>=' ) numericExpression
                                         | IN expressionList | NOT IN expressionList )? ;
numericExpression : additiveExpression ;
additiveExpression : multiplicativeExpression additiveTail* ;
additiveTail : op=( '+' | '-' ) multiplicativeExpression
             | ( numericLiteralPositive | numericLiteralNegative ) multiplicativeTail* ;
multiplicativeExpression : unaryExpression multiplicativeTail* ;
multiplicativeTail : op=( '*' | '/' ) unaryExpression ;
unaryExpression : op=( '!' | '+' | '-' )? primaryExpression ;
primaryExpression : brackettedExpression | builtInCall | iriOrFunction | rdfLiteral
                  | numericLiteral | booleanLiteral | var ;
brackettedExpression : '(' expression ')' ;
builtInCall
    : aggregate
    | name=( STR | LANG | DATATYPE | IRI | URI | ABS | CEIL | FLOOR | ROUND | STRLEN | UCASE | LCASE
           | ENCODE_FOR_URI | YEAR | MONTH | DAY | HOURS | MINUTES | SECONDS | TIMEZONE | TZ
           | MD5 | SHA1 | SHA256 | SHA384 | SHA512 | ISIRI | ISURI | ISBLANK | ISLITERAL | ISNUMERIC )
      '(' expression ')'
    | name=( LANGMATCHES | CONTAINS | STRSTARTS | STRENDS | STRBEFORE | STRAFTER | STRLANG | STRDT | SAMETERM )
      '(' expression ',' expression ')'
    | name=IF '(' expression ',' expression ',' expression ')'
    | name=BOUND '(' var ')'
    | name=BNODE ( '(' expression ')' | NIL )
    | name=( RAND | NOW | UUID | STRUUID ) NIL
    | name=( CONCAT | COALESCE ) expressionList
    | name=SUBSTR '(' expression ',' expression ( ',' expression )? ')'
    | name=REPLACE '(' expression ',' expression ',' expression ( ',' expression )? ')'
    | name=REGEX '(' expression ',' expression ( ',' expression )? ')'
    | existsFunc
    | notExistsFunc
    ;
existsFunc : EXISTS groupGraphPattern ;
notExistsFunc : NOT EXISTS groupGraphPattern ;
aggregate
    : name=COUNT '(' DISTINCT? ( '*' | expression ) ')'
    | name=( SUM | MIN | MAX | AVG | SAMPLE ) '(' DISTINCT? expression ')'
    | name=GROUP_CONCAT '(' DISTINCT? expression ( ';' SEPARATOR '=' string )? ')'
    ;
iriOrFunction : iri argList? ;
rdfLiteral : string ( LANGTAG | '^^' iri )? ;
numericLiteral : numericLiteralUnsigned | numericLiteralPositive | numericLiteralNegative ;
numericLiteralUnsigned : INTEGER | DECIMAL | DOUBLE ;
numericLiteralPositive : INTEGER_POSITIVE | DECIMAL_POSITIVE | DOUBLE_POSITIVE ;
numericLiteralNegative : INTEGER_NEGATIVE | DECIMAL_NEGATIVE | DOUBLE_NEGATIVE ;
booleanLiteral : TRUE | FALSE ;
string : STRING_LITERAL1 | STRING_LITERAL2 | STRING_LITERAL_LONG1 | STRING_LITERAL_LONG2 ;
iri : IRIREF | prefixedName ;
prefixedName : PNAME_LN | PNAME_NS ;
blankNode : BLANK_NODE_LABEL | ANON ;

// ---------------------------------------------------------------- lexer

A options { caseInsensitive = false; } : 'a' ;
// 'a' alone is case-sensitive; an upper-case A is not a keyword (and not
// anything else), so it is rejected by the lexer.

BASE : 'BASE' ; PREFIX : 'PREFIX' ; SELECT : 'SELECT' ; DISTINCT : 'DISTINCT' ;
REDUCED : 'REDUCED' ; AS : 'AS' ; CONSTRUCT : 'CONSTRUCT' ; WHERE : 'WHERE' ;
DESCRIBE : 'DESCRIBE' ; ASK : 'ASK' ; FROM : 'FROM' ; NAMED : 'NAMED' ;
GROUP : 'GROUP' ; BY : 'BY' ; HAVING : 'HAVING' ; ORDER : 'ORDER' ; ASC : 'ASC' ;
DESC : 'DESC' ; LIMIT : 'LIMIT' ; OFFSET : 'OFFSET' ; VALUES : 'VALUES' ;
LOAD : 'LOAD' ; SILENT : 'SILENT' ; INTO : 'INTO' ; CLEAR : 'CLEAR' ; DROP : 'DROP' ;
CREATE : 'CREATE' ; ADD : 'ADD' ; TO : 'TO' ; MOVE : 'MOVE' ; COPY : 'COPY' ;
INSERT : 'INSERT' ; DATA : 'DATA' ; DELETE : 'DELETE' ; WITH : 'WITH' ;
USING : 'USING' ; DEFAULT : 'DEFAULT' ; GRAPH : 'GRAPH' ; ALL : 'ALL' ;
OPTIONAL : 'OPTIONAL' ; SERVICE : 'SERVICE' ; BIND : 'BIND' ; UNDEF : 'UNDEF' ;
MINUS : 'MINUS' ; UNION : 'UNION' ; FILTER : 'FILTER' ; NOT : 'NOT' ; IN : 'IN' ;
STR : 'STR' ; LANG : 'LANG' ; LANGMATCHES : 'LANGMATCHES' ; DATATYPE : 'DATATYPE' ;
BOUND : 'BOUND' ; IRI : 'IRI' ; URI : 'URI' ; BNODE : 'BNODE' ; RAND : 'RAND' ;
ABS : 'ABS' ; CEIL : 'CEIL' ; FLOOR : 'FLOOR' ; ROUND : 'ROUND' ; CONCAT : 'CONCAT' ;
STRLEN : 'STRLEN' ; UCASE : 'UCASE' ; LCASE : 'LCASE' ; ENCODE_FOR_URI : 'ENCODE_FOR_URI' ;
CONTAINS : 'CONTAINS' ; STRSTARTS : 'STRSTARTS' ; STRENDS : 'STRENDS' ;
STRBEFORE : 'STRBEFORE' ; STRAFTER : 'STRAFTER' ; YEAR : 'YEAR' ; MONTH : 'MONTH' ;
DAY : 'DAY' ; HOURS : 'HOURS' ; MINUTES : 'MINUTES' ; SECONDS : 'SECONDS' ;
TIMEZONE : 'TIMEZONE' ; TZ : 'TZ' ; NOW : 'NOW' ; UUID : 'UUID' ; STRUUID : 'STRUUID' ;
MD5 : 'MD5' ; SHA1 : 'SHA1' ; SHA256 : 'SHA256' ; SHA384 : 'SHA384' ; SHA512 : 'SHA512' ;
COALESCE : 'COALESCE' ; IF : 'IF' ; STRLANG : 'STRLANG' ; STRDT : 'STRDT' ;
SAMETERM : 'sameTerm' ; ISIRI : 'isIRI' ; ISURI : 'isURI' ; ISBLANK : 'isBLANK' ;
ISLITERAL : 'isLITERAL' ; ISNUMERIC : 'isNUMERIC' ; REGEX : 'REGEX' ; SUBSTR : 'SUBSTR' ;
REPLACE : 'REPLACE' ; EXISTS : 'EXISTS' ; COUNT : 'COUNT' ; SUM : 'SUM' ; MIN : 'MIN' ;
MAX : 'MAX' ; AVG : 'AVG' ; SAMPLE : 'SAMPLE' ; GROUP_CONCAT : 'GROUP_CONCAT' ;
SEPARATOR : 'SEPARATOR' ; TRUE : 'true' ; FALSE : 'false' ;

IRIREF : '<' ( ~[<>"{}|^`\\\u0000-\u0020] | UCHAR )* '>' ;
PNAME_NS : PN_PREFIX? ':' ;
PNAME_LN : PNAME_NS PN_LOCAL ;
BLANK_NODE_LABEL : '_:' ( PN_CHARS_U | [0-9] ) ( ( PN_CHARS | '.' )* PN_CHARS )? ;
VAR1 : '?' VARNAME ;
VAR2 : '$' VARNAME ;
LANGTAG : '@' [a-z]+ ( '-' [a-z0-9]+ )* ;
INTEGER : [0-9]+ ;
DECIMAL : [0-9]* '.' [0-9]+ ;
DOUBLE : [0-9]+ '.' [0-9]* EXPONENT | '.' [0-9]+ EXPONENT | [0-9]+ EXPONENT ;
INTEGER_POSITIVE : '+' INTEGER ;
DECIMAL_POSITIVE : '+' DECIMAL ;
DOUBLE_POSITIVE : '+' DOUBLE ;
INTEGER_NEGATIVE : '-' INTEGER ;
DECIMAL_NEGATIVE : '-' DECIMAL ;
DOUBLE_NEGATIVE : '-' DOUBLE ;
STRING_LITERAL1 : '\'' ( ~['\\\n\r] | ECHAR | UCHAR )* '\'' ;
STRING_LITERAL2 : '"' ( ~["\\\n\r] | ECHAR | UCHAR )* '"' ;
STRING_LITERAL_LONG1 : '\'\'\'' ( ( '\'' | '\'\'' )? ( ~['\\] | ECHAR | UCHAR ) )* '\'\'\'' ;
STRING_LITERAL_LONG2 : '"""' ( ( '"' | '""' )? ( ~["\\] | ECHAR | UCHAR ) )* '"""' ;
NIL : '(' WS_CHAR* ')' ;
ANON : '[' WS_CHAR* ']' ;

LBRACE : '{' ; RBRACE : '}' ; LPAREN : '(' ; RPAREN : ')' ; LBRACK : '[' ; RBRACK : ']' ;
DOT : '.' ; COMMA : ',' ; SEMI : ';' ; STAR : '*' ; PLUS : '+' ; DASH : '-' ; SLASH : '/' ;
BANG : '!' ; QMARK : '?' ; HAT : '^' ; HATHAT : '^^' ; PIPE : '|' ; OR : '||' ; AND : '&&' ;
EQ : '=' ; NE : '!=' ; LT : '<' ; GT : '>' ; LE : '<=' ; GE : '>=' ;

WS : WS_CHAR+ -> channel(HIDDEN) ;
COMMENT : '#' ~[\n\r]* -> channel(HIDDEN) ;
// Any other character is a token of its own so that the parser reports it.
ERROR_CHAR : . ;

fragment WS_CHAR : [ \t\r\n] ;
fragment UCHAR : '\\u' HEX HEX HEX HEX | '\\U' HEX HEX HEX HEX HEX HEX HEX HEX ;
fragment EXPONENT : 'e' [+-]? [0-9]+ ;
fragment ECHAR : '\\' [tbnrf\\"'] ;
fragment PN_CHARS_BASE options { caseInsensitive = false; } : [a-zA-Z] | [\u00C0-\u00D6] | [\u00D8-\u00F6] | [\u00F8-\u02FF]
                       | [\u0370-\u037D] | [\u037F-\u1FFF] | [\u200C-\u200D] | [\u2070-\u218F]
                       | [\u2C00-\u2FEF] | [\u3001-\uD7FF] | [\uF900-\uFDCF] | [\uFDF0-\uFFFD]
                       | [\u{10000}-\u{EFFFF}] ;
fragment PN_CHARS_U : PN_CHARS_BASE | '_' ;
fragment VARNAME : ( PN_CHARS_U | [0-9] ) ( PN_CHARS_U | [0-9] | '\u00B7' | [\u0300-\u036F] | [\u203F-\u2040] )* ;
fragment PN_CHARS : PN_CHARS_U | '-' | [0-9] | '\u00B7' | [\u0300-\u036F] | [\u203F-\u2040] ;
fragment PN_PREFIX : PN_CHARS_BASE ( ( PN_CHARS | '.' )* PN_CHARS )? ;
fragment PN_LOCAL : ( PN_CHARS_U | ':' | [0-9] | PLX ) ( ( PN_CHARS | '.' | ':' | PLX )* ( PN_CHARS | ':' | PLX ) )? ;
fragment PLX : PERCENT | PN_LOCAL_ESC ;
fragment PERCENT : '%' HEX HEX ;
fragment HEX : [0-9a-f] ;
fragment PN_LOCAL_ESC : '\\' ( '_' | '~' | '.' | '-' | '!' | '$' | '&' | '\'' | '(' | ')' | '*' | '+' | ',' | ';' | '=' | '/' | '?' | '#' | '@' | '%' ) ;
